package io.lancerest.spark.catalog.shared;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Shared resources by key, counted by the holders that lease them: a key's resources are made
 * for its first lease and closed when its last is released, by hand or because its holder has
 * become unreachable (found by one {@link Reaper} thread for all keys). Closing closes them all.
 *
 * <p>One instance per owner (a SparkContext's): nothing here is JVM-wide.
 */
public final class ResourceShares implements AutoCloseable {
  private final Map<Object, SharedResources> byKey = new HashMap<>();
  private final Reaper reaper;
  private boolean closed;

  /** @param reaperThread the name of the thread that releases unreachable holders' leases */
  public ResourceShares(String reaperThread) {
    this.reaper = new Reaper(reaperThread);
  }

  /**
   * A lease of {@code key}'s resources for {@code holder}, released by {@link Lease#release} or
   * once {@code holder} is unreachable. The key must not reach the holder either, and is never
   * printed (it may hold secrets).
   *
   * @param label names the resources in messages ("Catalog lance")
   * @throws IllegalStateException after {@link #close}
   */
  public Lease lease(Object holder, Object key, String label) {
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException(label + " is closed (its SparkContext stopped); use a "
            + "catalog of a running session");
      }
      SharedResources r = byKey.computeIfAbsent(key, k -> new SharedResources(label));
      r.holders++;
      Lease lease = new Lease(r, () -> release(key, r));
      lease.watch(reaper.register(holder, lease::release));
      return lease;
    }
  }

  /** A lease of resources nobody else shares, closed when it is released. */
  public static Lease unshared(String label) {
    SharedResources r = new SharedResources(label);
    r.holders = 1;
    return new Lease(r, r::close);
  }

  private void release(Object key, SharedResources r) {
    synchronized (this) {
      if (--r.holders > 0) {
        return;
      }
      byKey.remove(key, r);
    }
    r.close(); // outside the lock: closing may wait for threads to end
  }

  /** Keys whose resources are open. */
  public synchronized int size() {
    return byKey.size();
  }

  /** The reaper, for diagnostics: whether its thread runs, how many holders it watches. */
  public Reaper reaper() {
    return reaper;
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
