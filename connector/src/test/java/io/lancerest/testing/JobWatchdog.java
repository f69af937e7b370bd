package io.lancerest.testing;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.SparkSession;

/**
 * A bounded wait for every Spark job of the test JVMs: a job still running after the limit is
 * cancelled, and the statement that started it fails with what it ran ({@code
 * spark.job.description} or the call site, i.e. the test line) and for how long. Registered in
 * every SparkContext of a module's tests by surefire's {@code spark.extraListeners}; together
 * with the JUnit default timeout (junit-platform.properties), which bounds what runs on the
 * driver, no test can hang.
 */
public final class JobWatchdog extends SparkListener {
  /** The limit unless {@code -Dlancerest.test.jobTimeoutSeconds} says otherwise. */
  public static final Duration DEFAULT = Duration.ofSeconds(
      Long.getLong("lancerest.test.jobTimeoutSeconds", 300));

  private record Running(long startedNanos, String what) {}

  private final long limitNanos;
  private final Map<Integer, Running> running = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer;

  /** The listener Spark creates from {@code spark.extraListeners}. */
  public JobWatchdog(org.apache.spark.SparkConf conf) {
    this(Duration.ofSeconds(conf.getLong("spark.lancerest.test.jobTimeoutSeconds",
        DEFAULT.toSeconds())));
  }

  private JobWatchdog(Duration limit) {
    this.limitNanos = limit.toNanos();
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "spark-job-watchdog");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::check, 1, 1, TimeUnit.SECONDS);
  }

  @Override
  public void onJobStart(SparkListenerJobStart start) {
    String what = null;
    if (start.properties() != null) {
      what = start.properties().getProperty("spark.job.description");
    }
    if (what == null && !start.stageInfos().isEmpty()) {
      // the call site of the action, e.g. "collectAsList at SomeTest.java:41"
      what = start.stageInfos().last().name();
    }
    running.put(start.jobId(), new Running(System.nanoTime(), what == null ? "no description"
        : what));
  }

  @Override
  public void onJobEnd(SparkListenerJobEnd end) {
    running.remove(end.jobId());
  }

  /** Its context is stopping: job ids restart with the next one, so forget these. */
  @Override
  public void onApplicationEnd(org.apache.spark.scheduler.SparkListenerApplicationEnd end) {
    running.clear();
    timer.shutdownNow();
  }

  /**
   * The running SparkContext: Spark's own record of it ({@code private[spark]} in Scala, public
   * to Java), else the active or default session's (fixtures clear the default session).
   */
  private static SparkContext activeContext() {
    SparkContext sc = org.apache.spark.SparkContext$.MODULE$.getActive().getOrElse(() -> null);
    if (sc == null) {
      SparkSession s = SparkSession.getActiveSession().getOrElse(
          () -> SparkSession.getDefaultSession().getOrElse(() -> null));
      sc = s == null ? null : s.sparkContext();
    }
    return sc;
  }

  private void check() {
    long now = System.nanoTime();
    running.forEach((id, r) -> {
      long elapsed = now - r.startedNanos();
      SparkContext sc = activeContext();
      if (elapsed > limitNanos && sc != null && running.remove(id) != null) {
        sc.cancelJob(id, "by the test's bounded wait: it (" + r.what() + ") ran for "
            + Duration.ofNanos(elapsed).toSeconds() + " s, more than "
            + Duration.ofNanos(limitNanos).toSeconds() + " s (-Dlancerest.test."
            + "jobTimeoutSeconds)");
      }
    });
  }
}
