package io.lancerest.spark.mv.server;

import io.lancerest.client.error.ErrorCode;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.refresh.JobTracker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's refreshes: at most {@code threads} run at once, at most {@code queued} wait, and
 * a view has at most one refresh waiting or running (asking again answers that job's id).
 */
final class RefreshQueue implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RefreshQueue.class);

  /** Runs one refresh to its end; the job log records how it ended. */
  @FunctionalInterface
  interface Worker {
    void refresh(List<String> viewId, RefreshOptions options, String launchedBy);
  }

  /** A refresh the queue holds: waiting ({@code started} false) or running. */
  record Entry(String jobId, List<String> viewId, String launchedBy, long submittedAt,
      boolean started) {}

  /**
   * A refresh that failed before the job log recorded anything of it (its view was dropped, the
   * upstream was down): what job/describe answers for it. The last {@value #ENDED_KEPT} are kept.
   */
  record Ended(String jobId, List<String> viewId, String launchedBy, long submittedAt,
      long endedAt, String message) {}

  static final int ENDED_KEPT = 1000;

  /** The job id answered, and whether it is an earlier request's. */
  record Submitted(String jobId, boolean existing) {}

  private final ThreadPoolExecutor pool;
  private final Worker worker;
  private final Map<List<String>, Entry> byView = new HashMap<>();
  private final Map<String, Entry> byJob = new HashMap<>();
  private final Map<String, Ended> ended = new java.util.LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Ended> eldest) {
      return size() > ENDED_KEPT;
    }
  };

  RefreshQueue(int threads, int queued, Worker worker) {
    this.worker = worker;
    AtomicInteger n = new AtomicInteger();
    // A SynchronousQueue when nothing may wait: a request is accepted only by a free thread.
    this.pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
        queued == 0 ? new java.util.concurrent.SynchronousQueue<>()
            : new ArrayBlockingQueue<>(queued), r -> {
              Thread t = new Thread(r, "mv-service-refresh-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Queues a refresh of {@code viewId}, or answers the one it already has.
   *
   * @throws ServiceError 503 with Retry-After when the queue is full
   */
  synchronized Submitted submit(List<String> viewId, RefreshOptions options, String launchedBy) {
    Entry busy = byView.get(viewId);
    if (busy != null) {
      return new Submitted(busy.jobId(), true);
    }
    String jobId = options.jobId() != null ? options.jobId() : UUID.randomUUID().toString();
    if (byJob.containsKey(jobId)) {
      throw ServiceError.badRequest("job_id '" + jobId + "' is the id of a refresh this "
          + "service holds now; give another job_id or none");
    }
    Entry e = new Entry(jobId, List.copyOf(viewId), launchedBy, System.currentTimeMillis(),
        false);
    RefreshOptions withId = options.toBuilder().jobId(jobId).build();
    byView.put(e.viewId(), e);
    byJob.put(jobId, e);
    try {
      pool.execute(() -> run(e, withId));
    } catch (RejectedExecutionException full) {
      byView.remove(e.viewId());
      byJob.remove(jobId);
      throw full(full);
    }
    return new Submitted(jobId, false);
  }

  /** Whether a refresh submitted now would be taken (a thread free or a place in the queue). */
  synchronized boolean hasRoom() {
    return pool.getActiveCount() < pool.getMaximumPoolSize()
        || pool.getQueue().remainingCapacity() > 0;
  }

  ServiceError full(Throwable cause) {
    return new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The service runs "
        + pool.getMaximumPoolSize() + " refreshes and has " + pool.getQueue().size()
        + " waiting, its limit; retry later", 10, cause);
  }

  private void run(Entry e, RefreshOptions options) {
    synchronized (this) {
      if (byJob.get(e.jobId()) == e) {
        Entry started = new Entry(e.jobId(), e.viewId(), e.launchedBy(), e.submittedAt(), true);
        byJob.put(e.jobId(), started);
        byView.put(e.viewId(), started);
      }
    }
    try {
      worker.refresh(e.viewId(), options, e.launchedBy());
    } catch (RuntimeException | Error failure) {
      // The job log has the failure when the refresh got that far; the queue keeps its message
      // for the refreshes that did not. The service goes on with the next refresh.
      String message = JobTracker.redact(failure.getClass().getSimpleName() + ": "
          + failure.getMessage());
      LOG.warn("Refresh of view {} (job {}) failed: {}", String.join(".", e.viewId()),
          e.jobId(), message);
      synchronized (this) {
        ended.put(e.jobId(), new Ended(e.jobId(), e.viewId(), e.launchedBy(), e.submittedAt(),
            System.currentTimeMillis(), message));
      }
    } finally {
      synchronized (this) {
        byJob.remove(e.jobId());
        byView.remove(e.viewId());
      }
    }
  }

  /** The refresh of {@code jobId} while the queue holds it. */
  synchronized Optional<Entry> job(String jobId) {
    return Optional.ofNullable(byJob.get(jobId));
  }

  /** A refresh of this queue that failed, by job id, if it is among the last ones kept. */
  synchronized Optional<Ended> ended(String jobId) {
    return Optional.ofNullable(ended.get(jobId));
  }

  /** Whether {@code viewId} has a refresh waiting or running. */
  synchronized boolean busy(List<String> viewId) {
    return byView.containsKey(viewId);
  }

  /**
   * Stops taking refreshes and drops the waiting ones; running ones go on to their end (an
   * interrupt could stop lance-core mid-write) unless the JVM exits first.
   */
  @Override
  public void close() {
    pool.getQueue().clear();
    pool.shutdown();
  }
}
