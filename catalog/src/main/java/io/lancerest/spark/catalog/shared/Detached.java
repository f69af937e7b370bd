package io.lancerest.spark.catalog.shared;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs work on a thread of its own that copies none of the caller's inheritable thread locals,
 * and waits for it. For starting what outlives the caller and may start threads of its own
 * inside code we do not control (the JDK's HTTP server, Spark's listener queues): a thread
 * started from a Spark session's thread inherits that session as its active one, and keeps it,
 * its catalogs and all they hold reachable for as long as it runs.
 */
public final class Detached {
  private Detached() {}

  /**
   * {@code work}'s result, computed on a fresh daemon thread named {@code threadName}; its
   * exceptions are rethrown here (checked ones wrapped in an IllegalStateException).
   *
   * @throws IllegalStateException when it has not finished within {@code timeout} (it goes on)
   */
  public static <T> T call(String threadName, Duration timeout, Callable<T> work) {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread t = new Thread(null, () -> {
      try {
        result.complete(work.call());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    }, threadName, 0, false);
    t.setDaemon(true);
    t.start();
    try {
      return result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(threadName + " failed: " + cause, cause);
    } catch (TimeoutException e) {
      throw new IllegalStateException(threadName + " did not finish within "
          + timeout.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for " + threadName, e);
    }
  }
}
