package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.RefreshContext;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * What the {@link JobService}s of one catalog configuration share on a SparkContext, whatever
 * session they belong to: the thread their heartbeats run on and the listener that counts the
 * tasks of their running jobs. One per configuration
 * ({@link io.lancerest.spark.catalog.LanceRestCatalog#shared}), not one per session: it holds a
 * service only weakly and a job only while it runs, so a session's catalog is collected with the
 * session.
 */
final class JobThreads implements AutoCloseable {
  private final SparkContext sc;
  private final ScheduledThreadPoolExecutor heartbeats;
  private final Progress progress = new Progress();
  private final AtomicBoolean listening = new AtomicBoolean();
  private volatile boolean closed;

  JobThreads(SparkContext sc, String catalogName) {
    this.sc = sc;
    this.heartbeats = new ScheduledThreadPoolExecutor(1,
        threads("lancerest-mv-jobs-" + catalogName + "-heartbeat"));
    // A service that is closed or collected cancels its beat: drop it from the queue at once.
    heartbeats.setRemoveOnCancelPolicy(true);
  }

  /**
   * Runs {@code action} on {@code target} every {@code intervalMs} until the returned future is
   * cancelled or {@code target} has been collected. {@code action} must not hold {@code target}.
   */
  <T> ScheduledFuture<?> every(long intervalMs, T target, Consumer<T> action) {
    WeakTask<T> task = new WeakTask<>(new WeakReference<>(target), action);
    task.future = heartbeats.scheduleWithFixedDelay(task, intervalMs, intervalMs,
        TimeUnit.MILLISECONDS);
    return task.future;
  }

  private static final class WeakTask<T> implements Runnable {
    private final WeakReference<T> target;
    private final Consumer<T> action;
    private volatile ScheduledFuture<?> future;

    WeakTask(WeakReference<T> target, Consumer<T> action) {
      this.target = target;
      this.action = action;
    }

    @Override
    public void run() {
      T t = target.get();
      if (t == null) {
        ScheduledFuture<?> f = future;
        if (f != null) {
          f.cancel(false);
        }
        return;
      }
      action.accept(t);
    }
  }

  /** Counts the tasks of {@code t}'s Spark jobs (tagged with its tag) until {@link #untrack}. */
  void track(JobTracker t) {
    // Registered on first need, outside any lock: the bus's lock is held while the context
    // stops, and that stop waits for the listener that closes this.
    if (!closed && listening.compareAndSet(false, true) && !sc.isStopped()) {
      try {
        sc.addSparkListener(progress);
      } catch (IllegalStateException stopped) {
        // the context stopped meanwhile: nothing left to count
      }
    }
    progress.running.add(t);
  }

  void untrack(JobTracker t) {
    progress.running.remove(t);
    progress.stages.values().removeIf(s -> s == t);
  }

  @Override
  public void close() {
    closed = true;
    heartbeats.shutdownNow();
    progress.running.clear();
    progress.stages.clear();
    // While the context stops (this runs at its end) its bus must not be touched.
    if (listening.get() && !sc.isStopped()) {
      sc.removeSparkListener(progress);
    }
  }

  /** Counts the tasks of each running job's stages (tagged with the job's tag). */
  private static final class Progress extends SparkListener {
    final Set<JobTracker> running = ConcurrentHashMap.newKeySet();
    final Map<Integer, JobTracker> stages = new ConcurrentHashMap<>();

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted e) {
      String tags = e.properties() == null ? null
          : e.properties().getProperty("spark.job.tags");
      if (tags == null) {
        return;
      }
      List<String> set = Arrays.asList(tags.split(","));
      for (JobTracker r : running) {
        if (set.contains(RefreshContext.jobTag(r.jobId()))) {
          stages.put(e.stageInfo().stageId(), r);
          r.tasksSubmitted(e.stageInfo().numTasks());
          return;
        }
      }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd e) {
      JobTracker t = stages.get(e.stageId());
      if (t != null && e.taskInfo() != null && e.taskInfo().successful()) {
        long rows = e.taskMetrics() == null ? 0
            : e.taskMetrics().inputMetrics().recordsRead()
                + e.taskMetrics().outputMetrics().recordsWritten();
        t.taskFinished(rows);
      }
    }

    @Override
    public void onStageCompleted(SparkListenerStageCompleted e) {
      stages.remove(e.stageInfo().stageId());
    }
  }

  /**
   * Daemon threads named {@code name-n}, without the starting thread's locals: a pool's threads
   * start in whichever session first needs one, and must not keep that session.
   */
  static java.util.concurrent.ThreadFactory threads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread th = new Thread(null, r, name + "-" + n.incrementAndGet(), 0, false);
      th.setDaemon(true);
      return th;
    };
  }
}
