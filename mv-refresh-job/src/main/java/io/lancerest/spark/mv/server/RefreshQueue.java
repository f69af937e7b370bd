package io.lancerest.spark.mv.server;

import io.lancerest.client.error.ErrorCode;
import io.lancerest.spark.mv.RefreshOptions;
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

  /** The job id answered, and whether it is an earlier request's. */
  record Submitted(String jobId, boolean existing) {}

  private final ThreadPoolExecutor pool;
  private final Worker worker;
  private final Map<List<String>, Entry> byView = new HashMap<>();
  private final Map<String, Entry> byJob = new HashMap<>();

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
      throw new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The service runs "
          + pool.getMaximumPoolSize() + " refreshes and has " + pool.getQueue().size()
          + " waiting, its limit; retry later", 10, full);
    }
    return new Submitted(jobId, false);
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
      // The job log has the failure; the service goes on with the next refresh.
      LOG.warn("Refresh of view {} (job {}) failed: {}", String.join(".", e.viewId()),
          e.jobId(), failure.toString());
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
