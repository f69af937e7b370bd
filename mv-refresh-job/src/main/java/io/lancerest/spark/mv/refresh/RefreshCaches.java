package io.lancerest.spark.mv.refresh;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What refreshes keep for the next refresh of the same catalog (a kind's caches, one per
 * class). The catalog owns one and drops it when it closes; a refresh run without a catalog gets
 * its own, so nothing is shared through static state.
 */
public final class RefreshCaches implements AutoCloseable {
  private final Map<Class<?>, Object> caches = new ConcurrentHashMap<>();

  /** The cache of {@code type}, made by {@code create} on first use. */
  public <T> T get(Class<T> type, Supplier<T> create) {
    return type.cast(caches.computeIfAbsent(type, t -> create.get()));
  }

  @Override
  public void close() {
    caches.clear();
  }
}
