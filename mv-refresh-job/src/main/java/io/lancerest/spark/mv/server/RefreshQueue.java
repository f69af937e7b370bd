package io.lancerest.spark.mv.server;

import io.lancerest.client.error.ErrorCode;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
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
 * a view has at most one refresh running and one waiting behind it. A request joins the view's
 * refresh only while that one has not started, so the refresh answered always starts after the
 * request: it sees every commit the caller saw before asking.
 */
final class RefreshQueue implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RefreshQueue.class);

  /** Runs one refresh to its end; the job log records how it ended. */
  @FunctionalInterface
  interface Worker {
    void refresh(List<String> viewId, RefreshOptions options, String launchedBy);
  }

  /**
   * Where the queue records the refreshes that wait, and those that end without running, so the
   * job log knows them after a restart.
   */
  interface Ledger {
    Ledger NONE = new Ledger() {
      @Override
      public void waiting(Entry e) {}

      @Override
      public void endedWaiting(Ended e) {}
    };

    void waiting(Entry e);

    void endedWaiting(Ended e);
  }

  /** A refresh the queue holds: waiting ({@code started} false) or running. */
  record Entry(String jobId, List<String> viewId, String launchedBy, long submittedAt,
      boolean started) {}

  /**
   * A refresh that failed before the job log recorded anything of it (its view was dropped, the
   * upstream was down): what job/describe answers for it. The last {@value #ENDED_KEPT} are kept.
   */
  record Ended(String jobId, List<String> viewId, String launchedBy, long submittedAt,
      long endedAt, JobStatus status, String message) {}

  /** What CANCEL of a job the queue holds did: {@code ended} when it was waiting. */
  record Cancel(boolean held, boolean running, Ended ended) {
    static final Cancel NOT_HELD = new Cancel(false, false, null);
    static final Cancel RUNNING = new Cancel(true, true, null);
  }

  static final int ENDED_KEPT = 1000;

  /** The job id answered, and whether it is an earlier request's. */
  record Submitted(String jobId, boolean existing) {}

  /**
   * A view's refreshes: the one in the pool ({@code current}, waiting or running) and the one
   * asked for while it ran ({@code next}), which the same thread runs when {@code current} ends.
   */
  private static final class Slot {
    Entry current;
    RefreshOptions currentOptions;
    Entry next;
    RefreshOptions nextOptions;

    Slot(Entry current, RefreshOptions currentOptions) {
      this.current = current;
      this.currentOptions = currentOptions;
    }
  }

  private final ThreadPoolExecutor pool;
  private final Worker worker;
  private final Ledger ledger;
  private final Map<List<String>, Slot> byView = new HashMap<>();
  private final Map<String, Entry> byJob = new HashMap<>();
  private final Map<String, Ended> ended = new java.util.LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Ended> eldest) {
      return size() > ENDED_KEPT;
    }
  };
  private boolean closed;

  RefreshQueue(int threads, int queued, Worker worker) {
    this(threads, queued, worker, Ledger.NONE);
  }

  RefreshQueue(int threads, int queued, Worker worker, Ledger ledger) {
    this.worker = worker;
    this.ledger = ledger;
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
   * Queues a refresh of {@code viewId}: joins the view's refresh that has not started yet, else
   * queues one to run after the running one (once: later requests join it), else a new one.
   *
   * @throws ServiceError 503 with Retry-After when the queue is full
   */
  Submitted submit(List<String> viewId, RefreshOptions options, String launchedBy) {
    Entry[] waits = new Entry[1];
    Submitted s = admit(viewId, options, launchedBy, waits);
    if (waits[0] != null) {
      ledger.waiting(waits[0]); // outside the lock: the log's write takes a commit
    }
    return s;
  }

  /** {@link #submit} under the lock; {@code waits[0]} is the new refresh when it must wait. */
  private synchronized Submitted admit(List<String> viewId, RefreshOptions options,
      String launchedBy, Entry[] waits) {
    if (closed) {
      throw new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The service is stopping and "
          + "takes no refresh; retry later", 10, null);
    }
    Slot slot = byView.get(viewId);
    if (slot != null && slot.next != null) {
      return join(slot.next, slot.nextOptions, options);
    }
    if (slot != null && !slot.current.started()) {
      return join(slot.current, slot.currentOptions, options);
    }
    String jobId = options.jobId() != null ? options.jobId() : UUID.randomUUID().toString();
    if (byJob.containsKey(jobId)) {
      throw ServiceError.badRequest("job_id '" + jobId + "' is the id of a refresh this "
          + "service holds now; give another job_id or none");
    }
    Entry e = new Entry(jobId, List.copyOf(viewId), launchedBy, System.currentTimeMillis(),
        false);
    RefreshOptions withId = options.toBuilder().jobId(jobId).build();
    if (slot != null) {
      // the running refresh may have read its source before the caller's commit
      slot.next = e;
      slot.nextOptions = withId;
      byJob.put(jobId, e);
      waits[0] = e;
      return new Submitted(jobId, false);
    }
    boolean threadFree = pool.getActiveCount() < pool.getMaximumPoolSize();
    byView.put(e.viewId(), new Slot(e, withId));
    byJob.put(jobId, e);
    try {
      pool.execute(() -> run(e, withId));
    } catch (RejectedExecutionException full) {
      byView.remove(e.viewId());
      byJob.remove(jobId);
      throw full(full);
    }
    if (!threadFree) {
      waits[0] = e;
    }
    return new Submitted(jobId, false);
  }

  /**
   * The refresh {@code waiting} answers a request with {@code asked}, which reads the same
   * source version: both the latest, or both the same {@code src_version}.
   */
  private static Submitted join(Entry waiting, RefreshOptions its, RefreshOptions asked) {
    if (!java.util.Objects.equals(its.srcVersion(), asked.srcVersion())) {
      throw new ServiceError(409, ErrorCode.CONCURRENT_MODIFICATION, "View "
          + String.join(".", waiting.viewId()) + " has a refresh waiting (job "
          + waiting.jobId() + ") " + (its.srcVersion() == null ? "to the latest source version"
          : "to source version " + its.srcVersion()) + "; ask for "
          + (asked.srcVersion() == null ? "the latest" : "src_version " + asked.srcVersion())
          + " again once it has started");
    }
    return new Submitted(waiting.jobId(), true);
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

  /**
   * Runs {@code e}; then hands the view's follow-up, asked for meanwhile, to the pool (behind
   * the refreshes of other views that wait), or runs it here when the pool has no room.
   */
  private void run(Entry e, RefreshOptions options) {
    while (e != null) {
      Entry next = null;
      RefreshOptions nextOptions = null;
      Ended droppedNow = null;
      try {
        runOne(e, options);
      } catch (Throwable unrecorded) {
        // even recording the failure failed: the view must still be freed, its follow-up run
        LOG.warn("Refresh of view {} (job {}) failed, and so did recording why: {}",
            String.join(".", e.viewId()), e.jobId(), unrecorded.getClass().getName());
      }
      synchronized (this) {
        Slot slot = byView.get(e.viewId());
        if (slot == null || !slot.current.jobId().equals(e.jobId())) {
          return; // dropped by close() before it started
        }
        byJob.remove(e.jobId());
        if (slot.next == null || closed) {
          if (slot.next != null) {
            droppedNow = dropped(slot.next);
          }
          byView.remove(e.viewId());
        } else {
          next = slot.next;
          nextOptions = slot.nextOptions;
          slot.current = next;
          slot.currentOptions = nextOptions;
          slot.next = null;
          slot.nextOptions = null;
        }
      }
      if (droppedNow != null) {
        ledger.endedWaiting(droppedNow);
      }
      if (next == null) {
        return;
      }
      Entry queued = next;
      RefreshOptions queuedOptions = nextOptions;
      try {
        pool.execute(() -> run(queued, queuedOptions));
        return;
      } catch (RejectedExecutionException noRoom) {
        e = next; // its caller already has its id: run it on this thread
        options = nextOptions;
      }
    }
  }

  /** A refresh answered to a caller but never started: job/describe then says why. */
  private Ended dropped(Entry e) {
    return endWaiting(e, JobStatus.FAILED, "the service stopped before this refresh started; "
        + "ask for it again");
  }

  private Ended endWaiting(Entry e, JobStatus status, String message) {
    byJob.remove(e.jobId());
    Ended x = new Ended(e.jobId(), e.viewId(), e.launchedBy(), e.submittedAt(),
        System.currentTimeMillis(), status, message);
    ended.put(e.jobId(), x);
    return x;
  }

  /**
   * Cancels the refresh {@code jobId} of {@code viewId} while it waits (it will not run); says
   * so when it runs (the engine cancels it then) or when the queue does not hold it.
   */
  Cancel cancel(String jobId, List<String> viewId) {
    Ended x;
    synchronized (this) {
      Entry e = byJob.get(jobId);
      Slot slot = e == null ? null : byView.get(e.viewId());
      if (e == null || slot == null || !e.viewId().equals(viewId)) {
        return Cancel.NOT_HELD;
      }
      if (e.started()) {
        return Cancel.RUNNING;
      }
      if (slot.next == e) {
        slot.next = null;
        slot.nextOptions = null;
      } else if (slot.current == e) {
        byView.remove(e.viewId()); // its task, if the pool still holds it, finds it gone
      }
      x = endWaiting(e, JobStatus.CANCELLED, "cancelled before it started (CANCEL JOB)");
    }
    ledger.endedWaiting(x);
    return new Cancel(true, false, x);
  }

  private void runOne(Entry e, RefreshOptions options) {
    synchronized (this) {
      Slot slot = byView.get(e.viewId());
      if (byJob.get(e.jobId()) != e || slot == null || slot.current != e) {
        return; // dropped by close() while it waited
      }
      Entry started = new Entry(e.jobId(), e.viewId(), e.launchedBy(), e.submittedAt(), true);
      byJob.put(e.jobId(), started);
      slot.current = started;
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
            System.currentTimeMillis(), JobStatus.FAILED, message));
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
    List<Ended> gone = new java.util.ArrayList<>();
    synchronized (this) {
      closed = true;
      pool.getQueue().clear();
      for (var it = byView.values().iterator(); it.hasNext(); ) {
        Slot slot = it.next();
        if (!slot.current.started()) {
          gone.add(dropped(slot.current));
          it.remove();
        }
      }
    }
    pool.shutdown();
    gone.forEach(ledger::endedWaiting);
  }
}
