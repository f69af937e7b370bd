package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.RefreshContext;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the {@link JobService}s of one catalog configuration share on a SparkContext, whatever
 * session they belong to: the thread their heartbeats run on, the thread that maintains their
 * job log, and the listener that counts the tasks of their running jobs. One per configuration
 * ({@link io.lancerest.spark.catalog.LanceRestCatalog#shared}), not one per session: it holds a
 * service only weakly and a job only while it runs, so a session's catalog is collected with the
 * session.
 *
 * <p>A heartbeat is one small append; the maintenance of the log (prune, compaction, version
 * cleanup) can take long on an object store, and runs on a thread of its own so that it never
 * holds up the heartbeats of the configuration's running jobs (a job without one for
 * {@value JobService#HEARTBEAT_TIMEOUT_CONF} is shown FAILED).
 */
final class JobThreads implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobThreads.class);
  /** How long the idle maintenance thread waits for more work before it ends. */
  private static final long MAINTENANCE_IDLE_SECONDS = 30;

  private final SparkContext sc;
  private final ScheduledThreadPoolExecutor heartbeats;
  private final ThreadPoolExecutor maintenance;
  private final Set<Beat> beats = ConcurrentHashMap.newKeySet();
  private final Progress progress = new Progress();
  private final AtomicBoolean listening = new AtomicBoolean();
  private volatile boolean closed;

  JobThreads(SparkContext sc, String catalogName) {
    this.sc = sc;
    this.heartbeats = new ScheduledThreadPoolExecutor(1,
        threads("lancerest-mv-jobs-" + catalogName + "-heartbeat"));
    // A service that is closed or collected cancels its beat: drop it from the queue at once.
    heartbeats.setRemoveOnCancelPolicy(true);
    // One run at a time: two cleanups of one log at once fail each other.
    this.maintenance = new ThreadPoolExecutor(1, 1, MAINTENANCE_IDLE_SECONDS, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), threads("lancerest-mv-jobs-" + catalogName
            + "-maintenance"));
    maintenance.allowCoreThreadTimeOut(true);
  }

  /**
   * Runs {@code service}'s heartbeat every {@code intervalMs} until {@link Beat#cancel} or until
   * the service has been collected; when this closes first (the context ended), tells the
   * service ({@link JobService#contextEnded}).
   */
  Beat every(long intervalMs, JobService service) {
    Beat b = new Beat(new WeakReference<>(service));
    beats.add(b);
    b.future = heartbeats.scheduleWithFixedDelay(b, intervalMs, intervalMs,
        TimeUnit.MILLISECONDS);
    return b;
  }

  /** One service's heartbeat, holding the service weakly. */
  final class Beat implements Runnable {
    private final WeakReference<JobService> service;
    private volatile ScheduledFuture<?> future;

    private Beat(WeakReference<JobService> service) {
      this.service = service;
    }

    @Override
    public void run() {
      JobService s = service.get();
      if (s == null) {
        cancel();
        return;
      }
      s.beat();
    }

    void cancel() {
      beats.remove(this);
      ScheduledFuture<?> f = future;
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  /**
   * Runs {@code work} (a maintenance of a job log) on the maintenance thread, after the runs
   * queued before it; never on the heartbeat thread. A no-op once closed.
   */
  void maintain(Runnable work) {
    try {
      maintenance.execute(work);
    } catch (RejectedExecutionException closedMeanwhile) {
      // the context ended: its logs are no longer maintained from here
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

  /**
   * Stops the heartbeats and the maintenance, and tells every service still alive that the
   * context ended (what it queued will not run). Called when the last catalog instance of the
   * configuration has gone (then no service is left), or when the context ends.
   */
  @Override
  public void close() {
    closed = true;
    heartbeats.shutdownNow();
    maintenance.shutdownNow();
    for (Beat b : List.copyOf(beats)) {
      b.cancel();
      JobService s = b.service.get();
      if (s != null) {
        try {
          s.contextEnded();
        } catch (RuntimeException e) {
          LOG.warn("Ending the queued refreshes of a job service failed: {}", e.toString());
        }
      }
    }
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
