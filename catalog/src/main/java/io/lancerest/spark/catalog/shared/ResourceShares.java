package io.lancerest.spark.catalog.shared;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shared resources by key, counted by the holders that lease them: a key's resources are made
 * for its first lease and closed when its last is released, by hand or because its holder has
 * become unreachable (found by one {@link Reaper} thread for all keys). Closing closes them all;
 * so does the reaper once the owner has ended, should nobody close them.
 *
 * <p>One instance per owner (a SparkContext's): nothing here is JVM-wide.
 */
public final class ResourceShares implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ResourceShares.class);

  private final Map<Object, SharedResources> byKey = new HashMap<>();
  /** Keys whose last lease was released and whose resources are closing now. */
  private final Map<Object, CompletableFuture<Void>> closing = new HashMap<>();
  private final Duration closeWait;
  private final BooleanSupplier ownerEnded;
  private final Reaper reaper;
  private boolean closed;

  /**
   * @param reaperThread the name of the thread that releases unreachable holders' leases
   * @param closeWait how long a new first lease of a key waits for the key's previous resources
   *     to finish closing (a relay on a fixed port must have let it go)
   * @param checkEvery how often the reaper asks {@code ownerEnded}
   * @param ownerEnded whether the owner has ended: then everything here closes, in case the
   *     owner's own notice of its end was lost; it must not keep the owner reachable
   */
  public ResourceShares(String reaperThread, Duration closeWait, Duration checkEvery,
      BooleanSupplier ownerEnded) {
    this.closeWait = closeWait;
    this.ownerEnded = ownerEnded;
    this.reaper = new Reaper(reaperThread, checkEvery, this::closeIfOwnerEnded);
  }

  /**
   * A lease of {@code key}'s resources for {@code holder}, released by {@link Lease#release} or
   * once {@code holder} is unreachable. The key must not reach the holder either, and is never
   * printed (it may hold secrets). While the key's previous resources are still closing, waits
   * for them, at most the {@code closeWait} given at construction.
   *
   * @param label names the resources in messages ("Catalog lance")
   * @throws IllegalStateException after {@link #close}
   */
  public Lease lease(Object holder, Object key, String label) {
    long deadline = System.nanoTime() + closeWait.toNanos();
    while (true) {
      CompletableFuture<Void> previous;
      synchronized (this) {
        if (closed) {
          throw new IllegalStateException(label + " is closed (its SparkContext stopped); use a "
              + "catalog of a running session");
        }
        previous = closing.get(key);
        if (previous == null || System.nanoTime() - deadline >= 0) {
          if (previous != null) {
            LOG.warn("{}: what its previous sessions shared is still closing after {} s; its "
                + "new session opens its own meanwhile (a fixed credential-relay.port may still "
                + "be taken)", label, closeWait.toSeconds());
          }
          SharedResources r = byKey.computeIfAbsent(key, k -> new SharedResources(label));
          r.holders++;
          Lease lease = new Lease(r, () -> release(key, r));
          lease.watch(reaper.register(holder, lease::release));
          return lease;
        }
      }
      awaitClosed(previous, deadline);
    }
  }

  private static void awaitClosed(CompletableFuture<Void> previous, long deadline) {
    try {
      previous.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // the loop sees the deadline, or the next state of the key
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for shared resources to close",
          e);
    }
  }

  /** A lease of resources nobody else shares, closed when it is released. */
  public static Lease unshared(String label) {
    SharedResources r = new SharedResources(label);
    r.holders = 1;
    return new Lease(r, r::close);
  }

  private void release(Object key, SharedResources r) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    synchronized (this) {
      if (--r.holders > 0) {
        return;
      }
      if (!byKey.remove(key, r)) {
        return; // closed with all the others
      }
      closing.put(key, done);
    }
    try {
      r.close(); // outside the lock: closing may wait for threads to end
    } finally {
      synchronized (this) {
        closing.remove(key, done);
      }
      done.complete(null);
    }
  }

  /** Keys whose resources are open. */
  public synchronized int size() {
    return byKey.size();
  }

  /** The reaper, for diagnostics: whether its thread runs, how many holders it watches. */
  public Reaper reaper() {
    return reaper;
  }

  private void closeIfOwnerEnded() {
    if (ownerEnded.getAsBoolean()) {
      LOG.info("The owner of {} shared resource set(s) has ended without closing them: closing "
          + "them now", size());
      close();
    }
  }

  /** Closes every key's resources and ends the reaper's thread; later leases fail. Idempotent. */
  @Override
  public void close() {
    List<SharedResources> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(byKey.values());
      byKey.clear();
    }
    reaper.close();
    all.forEach(SharedResources::close);
  }
}
