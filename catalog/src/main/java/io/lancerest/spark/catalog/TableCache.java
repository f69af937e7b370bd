package io.lancerest.spark.catalog;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Loaded tables by identifier, each kept for a fixed time after it was loaded
 * (expire-after-write). Reads never extend an entry's life: with expire-after-access a table that
 * is queried constantly would never be re-described and would stay stale forever.
 *
 * <p>A zero TTL disables caching. Every DDL and {@code REFRESH TABLE} invalidates the entry.
 */
final class TableCache<V> {
  private record Entry<V>(V value, long expiresAtNanos) {}

  private final long ttlNanos;
  private final LongSupplier nanoClock;
  private final Map<List<String>, Entry<V>> entries = new ConcurrentHashMap<>();

  TableCache(Duration ttl) {
    this(ttl, System::nanoTime);
  }

  TableCache(Duration ttl, LongSupplier nanoClock) {
    this.ttlNanos = ttl.toNanos();
    this.nanoClock = nanoClock;
  }

  boolean enabled() {
    return ttlNanos > 0;
  }

  /** The cached value, or null when absent or expired. */
  V get(List<String> id) {
    if (!enabled()) {
      return null;
    }
    Entry<V> e = entries.get(id);
    if (e == null) {
      return null;
    }
    if (nanoClock.getAsLong() - e.expiresAtNanos >= 0) {
      entries.remove(id, e);
      return null;
    }
    return e.value;
  }

  void put(List<String> id, V value) {
    if (enabled()) {
      entries.put(List.copyOf(id), new Entry<>(value, nanoClock.getAsLong() + ttlNanos));
    }
  }

  void invalidate(List<String> id) {
    entries.remove(id);
  }

  /** Drops every entry of namespace {@code namespace} and of namespaces below it. */
  void invalidateUnder(List<String> namespace) {
    entries.keySet().removeIf(k -> k.size() > namespace.size()
        && k.subList(0, namespace.size()).equals(namespace));
  }

  void clear() {
    entries.clear();
  }

  int size() {
    return entries.size();
  }
}
