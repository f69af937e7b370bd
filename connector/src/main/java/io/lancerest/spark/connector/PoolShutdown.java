package io.lancerest.spark.connector;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Waiting for a pool's threads to end before the caller closes what they use (a dataset, an
 * allocator): native lance-core calls do not stop on interrupt, so the wait itself must not
 * stop on one either.
 */
public final class PoolShutdown {
  private PoolShutdown() {}

  /**
   * Shuts {@code pool} down and waits up to {@code timeout} for its tasks to end, whatever this
   * thread's interrupts (kept for the caller); whether they ended.
   */
  public static boolean awaitEnd(ExecutorService pool, long timeout, TimeUnit unit) {
    pool.shutdownNow();
    boolean interrupted = Thread.interrupted();
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    try {
      while (!pool.isTerminated() && System.nanoTime() < deadline) {
        try {
          pool.awaitTermination(100, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      return pool.isTerminated();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
