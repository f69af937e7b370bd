package io.lancerest.spark.catalog;

import io.lancerest.spark.catalog.shared.ContextResources;
import io.lancerest.spark.catalog.shared.Lease;
import io.lancerest.spark.catalog.shared.ResourceShares;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.slf4j.LoggerFactory;

/**
 * Whether a catalog instance is closed, the resources it owns until then, and its lease of what
 * the instances of its configuration share on their SparkContext.
 *
 * <p>Spark 3.5 never closes catalogs, and a session that goes away takes its catalog instances
 * with it: the lease is released when the instance is closed, when it has been collected, or
 * when the context ends (then everything shared closes). Nothing the context keeps reaches the
 * instance: its own resources must not own threads or register with the context.
 */
final class CatalogLifecycle {
  private final String name;
  private final Lease lease;
  private boolean closed;
  /** What components acting for the catalog keep with it (caches), closed with it. */
  private final Map<Class<?>, AutoCloseable> resources = new LinkedHashMap<>();

  private CatalogLifecycle(String name, Lease lease) {
    this.name = name;
    this.lease = lease;
  }

  /**
   * The lifecycle of {@code catalog}: with a running SparkContext, a lease of what the catalogs
   * of its {@code key} share there; without one, resources of its own.
   */
  static CatalogLifecycle start(LanceRestCatalog catalog, String name, ShareKey key) {
    SparkContext sc = runningContext();
    ResourceShares shares = sc == null ? null : ContextResources.of(sc);
    String label = "Catalog " + name;
    return new CatalogLifecycle(name, shares == null ? ResourceShares.unshared(label)
        : shares.lease(catalog, key, label));
  }

  private static SparkContext runningContext() {
    scala.Option<SparkSession> session = SparkSession.getActiveSession();
    if (session.isEmpty()) {
      session = SparkSession.getDefaultSession();
    }
    if (session.isEmpty() || session.get().sparkContext().isStopped()) {
      return null;
    }
    return session.get().sparkContext();
  }

  /** See {@link LanceRestCatalog#resource}. */
  <T extends AutoCloseable> T resource(Class<T> type, Supplier<T> create) {
    synchronized (this) {
      requireOpen();
      // under the lifecycle's lock, as close() takes the resources: none is made after it
      return type.cast(resources.computeIfAbsent(type, t -> create.get()));
    }
  }

  /** See {@link LanceRestCatalog#shared}. */
  <T extends AutoCloseable> T shared(Class<T> type, Supplier<T> create) {
    synchronized (this) {
      requireOpen();
    }
    return lease.get(type, create);
  }

  private void requireOpen() {
    if (closed || !lease.isOpen()) {
      throw new IllegalStateException("Catalog " + name + " is closed (closed by its owner, or "
          + "its SparkContext stopped); use a catalog of a running session");
    }
  }

  /** Marks the catalog closed; false when it already was. */
  synchronized boolean beginClose() {
    if (closed) {
      return false;
    }
    closed = true;
    return true;
  }

  /** Closes every owned resource; a failure is logged and the others still close. */
  void closeOwned() {
    List<AutoCloseable> owned;
    synchronized (this) {
      owned = new ArrayList<>(resources.values());
      resources.clear();
    }
    for (AutoCloseable r : owned) {
      try {
        r.close();
      } catch (Exception e) {
        LoggerFactory.getLogger(LanceRestCatalog.class).warn("Catalog {}: closing {} failed: {}",
            name, r.getClass().getName(), e.toString());
      }
    }
  }

  /** Gives up the lease: the last instance of a configuration closes what they shared. */
  void releaseShare() {
    lease.release();
  }

  /**
   * What catalog instances share resources by: their name and every option as Spark gives it
   * (so tokens and secrets too). Never printed.
   */
  record ShareKey(String catalog, Map<String, String> options) {
    ShareKey {
      options = Map.copyOf(options);
    }

    @Override
    public String toString() {
      return "catalog " + catalog + " (" + options.size() + " options)";
    }
  }
}
