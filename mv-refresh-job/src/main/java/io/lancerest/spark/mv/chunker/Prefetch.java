package io.lancerest.spark.mv.chunker;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Runs the chunker on the next units of a work item on the task's pool while the current one is
 * written ({@code intra_applier_concurrency}), handing each unit's children over in order.
 */
final class Prefetch {
  private static final int QUEUE_ROWS = 256;
  private static final Object END = new Object();

  private record Failed(Throwable error) {}

  private final ExecutorService pool;
  private final int concurrency;
  private final ChunkerCalls calls;
  // by identity: two units of equal parents are still two calls
  private final Map<WorkUnit, Queue> prefetched = new IdentityHashMap<>();
  private final List<Future<?>> futures = new ArrayList<>();

  /** @param pool the task's threads, {@code null} when it calls the chunker on one */
  Prefetch(ExecutorService pool, int concurrency, ChunkerCalls calls) {
    this.pool = pool;
    this.concurrency = concurrency;
    this.calls = calls;
  }

  boolean enabled() {
    return pool != null;
  }

  /**
   * The children of {@code u}, computed on the pool, which starts on the first {@code
   * concurrency - 1} units of {@code next} too.
   */
  Iterator<ChildRow> children(WorkUnit u, Iterable<WorkUnit> next) {
    submit(u);
    int ahead = 0;
    for (WorkUnit n : next) {
      if (ahead++ >= concurrency - 1) {
        break;
      }
      submit(n);
    }
    return prefetched.remove(u).iterator();
  }

  private void submit(WorkUnit u) {
    if (prefetched.containsKey(u)) {
      return;
    }
    Queue p = new Queue();
    prefetched.put(u, p);
    futures.add(pool.submit(() -> {
      try {
        Iterator<ChildRow> out = calls.call(u);
        while (out.hasNext()) {
          p.queue.put(out.next());
        }
        p.queue.put(END);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Throwable t) {
        try {
          p.queue.put(new Failed(t));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }));
  }

  /** Stops what runs ahead and forgets it (the item is done, abandoned or run again). */
  void cancel() {
    for (Future<?> f : futures) {
      f.cancel(true);
    }
    futures.clear();
    prefetched.clear();
  }

  /** Children computed ahead by a pool thread, handed over in order through a bounded queue. */
  private static final class Queue {
    final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(QUEUE_ROWS);

    Iterator<ChildRow> iterator() {
      return new Iterator<>() {
        private Object next;

        @Override
        public boolean hasNext() {
          if (next == null) {
            try {
              next = queue.take();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new ItemStream.InterruptedRuntime();
            }
          }
          if (next instanceof Failed f) {
            next = null;
            Throwable t = f.error();
            if (t instanceof RuntimeException re) {
              throw re;
            }
            if (t instanceof Error err) {
              throw err;
            }
            throw new IllegalStateException(t);
          }
          return next != END;
        }

        @Override
        public ChildRow next() {
          if (!hasNext()) {
            throw new java.util.NoSuchElementException();
          }
          ChildRow c = (ChildRow) next;
          next = null;
          return c;
        }
      };
    }
  }
}
