package io.lancerest.spark.catalog.shared;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resources the holders of one key share (one of each type, made on first use), open until
 * the last {@link Lease} on them is released or their {@link ResourceShares} closes. They must
 * not reach a holder: a holder that stays reachable from them is never released.
 */
public final class SharedResources {
  private static final Logger LOG = LoggerFactory.getLogger(SharedResources.class);

  private final String label;
  private final Map<Class<?>, AutoCloseable> resources = new LinkedHashMap<>();
  /** Leases not released yet; guarded by the owning {@link ResourceShares}. */
  int holders;
  private boolean closed;

  SharedResources(String label) {
    this.label = label;
  }

  /**
   * The one {@code type}, made by {@code create} on first use. {@code create} runs under this
   * object's lock (two holders never make two) and must not be kept by what it makes.
   *
   * @throws IllegalStateException once closed
   */
  public synchronized <T extends AutoCloseable> T get(Class<T> type, Supplier<T> create) {
    if (closed) {
      throw new IllegalStateException(label + " is closed (closed by its owner, or its "
          + "SparkContext stopped); use a catalog of a running session");
    }
    return type.cast(resources.computeIfAbsent(type, t -> create.get()));
  }

  public synchronized boolean isClosed() {
    return closed;
  }

  /** What is open now, by type name (for diagnostics; never values). */
  public synchronized List<String> open() {
    return resources.keySet().stream().map(Class::getSimpleName).toList();
  }

  /**
   * Closes every resource, the last made first (a relay before the client it uses); a failure
   * is logged and the others still close. Idempotent.
   */
  void close() {
    List<AutoCloseable> owned;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      owned = new ArrayList<>(resources.values());
      resources.clear();
    }
    Collections.reverse(owned);
    for (AutoCloseable r : owned) {
      try {
        r.close();
      } catch (Exception e) {
        LOG.warn("{}: closing {} failed: {}", label, r.getClass().getName(), e.toString());
      }
    }
  }
}
