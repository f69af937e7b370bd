package io.lancerest.spark.mv.engine;

import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.result.JobRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.SparkContext;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The refresh jobs of one catalog instance: its job log ({@link JobsTable}), the jobs running
 * in it now, the heartbeat that records their progress at a steady rate, and the threads ASYNC
 * refreshes run on. It is a component of the {@link LanceRestCatalog} (one per catalog, so one
 * per SparkSession that uses the catalog), closed with it: nothing here is JVM-wide.
 *
 * <p>It owns no thread that outlives its work, so a session that goes away without closing its
 * catalog takes the service along: the heartbeat runs on the thread the services of the
 * configuration share ({@link JobThreads}), which holds it weakly, and the ASYNC threads end
 * when idle.
 */
public final class JobService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobService.class);
  public static final String ENABLED_CONF = "spark.lancerest.mv.jobs.enabled";
  /** Namespace of the job log (relative to the catalog's {@code parent}). */
  public static final String NAMESPACE_CONF = JobsTable.NAMESPACE_CONF;
  public static final String HEARTBEAT_INTERVAL_CONF = "spark.lancerest.mv.jobs.heartbeatInterval";
  public static final String HEARTBEAT_TIMEOUT_CONF = "spark.lancerest.mv.jobs.heartbeatTimeout";
  public static final String ASYNC_THREADS_CONF = "spark.lancerest.mv.jobs.asyncThreads";
  public static final String CANCEL_WAIT_CONF = "spark.lancerest.mv.jobs.cancelWait";
  /** How long the job log keeps an ended job, from its end ({@link JobLogRetention}). */
  public static final String RETENTION_CONF = "spark.lancerest.mv.jobs.retention";
  /** The ended jobs of each view the job log keeps, newest first ({@link JobLogRetention}). */
  public static final String KEEP_PER_VIEW_CONF = "spark.lancerest.mv.jobs.keepPerView";
  /**
   * Spark local property (per thread) naming who starts the refreshes of this thread, recorded
   * as the job's {@code launched_by}; the Spark user when unset.
   */
  public static final String LAUNCHED_BY_PROPERTY = "lancerest.mv.launchedBy";
  static final String DEFAULT_HEARTBEAT_INTERVAL = "10s";
  static final String DEFAULT_HEARTBEAT_TIMEOUT = "120s";
  static final String DEFAULT_CANCEL_WAIT = "60s";
  static final String DEFAULT_RETENTION = "30d";
  static final String DEFAULT_KEEP_PER_VIEW = "1000";
  /** How long an idle ASYNC thread waits for the next refresh before it ends. */
  private static final long ASYNC_IDLE_SECONDS = 30;
  /** Local properties a pooled thread may still hold from the refresh it ran before. */
  private static final String[] INHERITED = {"spark.sql.execution.id",
      "spark.sql.execution.root.id", "spark.jobGroup.id", "spark.job.description",
      "spark.job.tags",
      "spark.job.interruptOnCancel", "spark.job.tags", "callSite.short", "callSite.long"};

  private final SparkContext sc;
  private final JobsTable table;
  private final Map<String, JobTracker> running = new ConcurrentHashMap<>();
  private final JobThreads shared;
  private final long heartbeatMs;
  private JobThreads.Beat heartbeat;
  private final ThreadPoolExecutor async;
  private volatile boolean maintenancePending;
  /** Whether a maintenance of the log is queued or running on the shared maintenance thread. */
  private final AtomicBoolean maintaining = new AtomicBoolean();
  /** Heartbeats with running jobs since the log was last maintained (the heartbeat thread's). */
  private int beatsSinceMaintenance;
  /** Heartbeats of running jobs between two maintenance runs of the log. */
  static final int MAINTAIN_EVERY_BEATS = 6;

  private JobService(SparkSession spark, CatalogBinding cat, JobThreads shared) {
    this.sc = spark.sparkContext();
    this.shared = shared;
    this.table = new JobsTable(cat,
        spark.conf().get(JobsTable.NAMESPACE_CONF, JobsTable.DEFAULT_NAMESPACE),
        spark.conf().get(JobsTable.TABLE_CONF, JobsTable.DEFAULT_TABLE), retention(spark));
    this.heartbeatMs = Math.max(100, millis(spark, HEARTBEAT_INTERVAL_CONF,
        DEFAULT_HEARTBEAT_INTERVAL));
    int threads = Math.max(1, Integer.parseInt(spark.conf().get(ASYNC_THREADS_CONF, "2").trim()));
    this.async = new ThreadPoolExecutor(threads, threads, ASYNC_IDLE_SECONDS, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), JobThreads.threads("lancerest-mv-jobs-" + cat.name()
            + "-async"));
    async.allowCoreThreadTimeOut(true);
  }

  /**
   * The service of the binding's catalog, created with it; {@code null} when the catalog is not
   * a {@link LanceRestCatalog} or {@value #ENABLED_CONF} is false.
   */
  static JobService of(SparkSession spark, CatalogBinding cat) {
    if (!Boolean.parseBoolean(spark.conf().get(ENABLED_CONF, "true").trim())
        || !(cat.catalog() instanceof LanceRestCatalog lance)) {
      return null;
    }
    SparkContext sc = spark.sparkContext();
    String name = cat.name();
    JobThreads shared = lance.shared(JobThreads.class, () -> new JobThreads(sc, name));
    return lance.resource(JobService.class, () -> {
      JobService s = new JobService(spark, cat, shared);
      s.heartbeat = shared.every(s.heartbeatMs, s);
      return s;
    });
  }

  static long millis(SparkSession spark, String conf, String dflt) {
    return millis(conf, spark.conf().get(conf, dflt).trim(), "30s or 2min");
  }

  private static long millis(String conf, String v, String examples) {
    try {
      return JavaUtils.timeStringAsMs(v);
    } catch (NumberFormatException e) {
      throw new io.lancerest.spark.mv.error.InvalidOptionException(conf + " must be a duration such "
          + "as " + examples + ", got '" + v + "'");
    }
  }

  /** The session's {@value #RETENTION_CONF} and {@value #KEEP_PER_VIEW_CONF}. */
  static JobLogRetention retention(SparkSession spark) {
    String age = spark.conf().get(RETENTION_CONF, DEFAULT_RETENTION).trim();
    long ms = millis(RETENTION_CONF, age, "30d or 12h");
    if (ms <= 0) {
      throw new io.lancerest.spark.mv.error.InvalidOptionException(RETENTION_CONF, age,
          "a duration longer than zero such as 30d or 12h (how long an ended job stays in the "
              + "job log)");
    }
    String keep = spark.conf().get(KEEP_PER_VIEW_CONF, DEFAULT_KEEP_PER_VIEW).trim();
    int n;
    try {
      n = Integer.parseInt(keep);
    } catch (NumberFormatException e) {
      n = 0;
    }
    if (n < 1) {
      throw new io.lancerest.spark.mv.error.InvalidOptionException(KEEP_PER_VIEW_CONF, keep,
          "a whole number from 1 to " + Integer.MAX_VALUE + " (the ended jobs of each view the "
              + "job log keeps)");
    }
    return new JobLogRetention(java.time.Duration.ofMillis(ms), n);
  }

  JobsTable table() {
    return table;
  }

  String applicationId() {
    return sc.applicationId();
  }

  /** A new job of this application, tracked until it ends. */
  JobTracker open(String jobId, List<String> viewServerId) {
    String by = sc.getLocalProperty(LAUNCHED_BY_PROPERTY);
    JobTracker t = new JobTracker(table, jobId, viewServerId, sc.applicationId(),
        by == null || by.isBlank() ? sc.sparkUser() : by);
    if (running.putIfAbsent(jobId, t) != null) {
      throw new io.lancerest.spark.mv.error.InvalidOptionException("job_id '" + jobId + "' is the id "
          + "of a refresh running now; give another job_id or none");
    }
    shared.track(t);
    return t;
  }

  /** The job's refresh returned or threw: it is no longer running here. */
  void close(JobTracker t) {
    running.remove(t.jobId(), t);
    shared.untrack(t);
    maintenancePending = true;
  }

  /** A job running in this catalog instance now, or {@code null}. */
  JobTracker running(String jobId) {
    return running.get(jobId);
  }

  /** Runs {@code refresh} on an ASYNC thread, in {@code spark} (the caller's session). */
  void submit(SparkSession spark, JobTracker t, Runnable refresh) {
    async.execute(new AsyncRefresh(t, () -> {
      SparkSession.setActiveSession(spark);
      SparkContext ctx = spark.sparkContext();
      for (String k : INHERITED) {
        ctx.setLocalProperty(k, null);
      }
      try {
        refresh.run();
      } catch (RuntimeException | Error e) {
        // Recorded in the job log by the refresh; there is no caller left to throw to.
        LOG.warn("ASYNC refresh job {} ended with {}", t.jobId(), JobTracker.message(e));
      } finally {
        SparkSession.clearActiveSession();
      }
    }));
  }

  /** An ASYNC refresh waiting for a thread, with its job (to end it should it never start). */
  private record AsyncRefresh(JobTracker job, Runnable refresh) implements Runnable {
    @Override
    public void run() {
      refresh.run();
    }
  }

  /**
   * One append with the progress of every running job (on the heartbeat thread the services of
   * the configuration share: nothing slow), then, when due, a maintenance of the log on the
   * shared maintenance thread.
   */
  void beat() {
    try {
      List<JobRecord> states = new ArrayList<>();
      for (JobTracker t : running.values()) {
        JobRecord r = t.heartbeat();
        if (r != null) {
          states.add(r);
        }
      }
      table.append(states);
      // After jobs end, and every MAINTAIN_EVERY_BEATS beats while a long one runs (its
      // heartbeats are appends too).
      if ((maintenancePending
          || (!states.isEmpty() && ++beatsSinceMaintenance >= MAINTAIN_EVERY_BEATS))
          && maintaining.compareAndSet(false, true)) {
        maintenancePending = false;
        beatsSinceMaintenance = 0;
        shared.maintain(maintenance(table, maintaining));
      }
    } catch (Exception e) {
      // lance-core throws the store's IOException undeclared; anything escaping here would
      // cancel every later heartbeat of this catalog.
      LOG.warn("Job log {}: recording the heartbeat of {} running job(s) failed (the refreshes "
          + "go on): {}", table.display(), running.size(), JobTracker.message(e));
    }
  }

  /** A maintenance of {@code log}; holds no service, so a queued one keeps no session. */
  private static Runnable maintenance(JobsTable log, AtomicBoolean maintaining) {
    return () -> {
      try {
        log.maintain();
      } catch (Exception e) { // lance-core's IOException, undeclared
        LOG.warn("Job log {}: maintenance (prune, compaction, old versions) failed; the next "
            + "one tries again: {}", log.display(), JobTracker.message(e));
      } finally {
        maintaining.set(false);
      }
    };
  }

  /**
   * The SparkContext ended while this service lives: the ASYNC refreshes still waiting for a
   * thread never start, and their jobs end CANCELLED saying so; those running fail with Spark.
   */
  void contextEnded() {
    async.shutdown();
    endQueued("the SparkContext stopped before it started");
  }

  /** Ends the jobs of the ASYNC refreshes still queued (they will not run): CANCELLED. */
  private void endQueued(String why) {
    List<Runnable> queued = new ArrayList<>();
    async.getQueue().drainTo(queued);
    for (Runnable r : queued) {
      if (r instanceof AsyncRefresh a) {
        a.job().cancelled("ASYNC refresh job " + a.job().jobId() + " did not run: " + why
            + "; nothing was refreshed. Run the refresh again in a running session");
        close(a.job());
      }
    }
  }

  @Override
  public void close() {
    if (heartbeat != null) {
      heartbeat.cancel();
    }
    async.shutdown();
    endQueued("its catalog was closed before it started");
    async.shutdownNow();
    for (JobTracker t : running.values()) {
      shared.untrack(t);
      if (!sc.isStopped()) {
        t.requestCancel();
        sc.cancelJobsWithTag(RefreshContext.jobTag(t.jobId()));
      }
    }
  }
}
