package io.lancerest.spark.catalog;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.sql.SparkSession;
import org.slf4j.LoggerFactory;

/**
 * Whether a catalog is closed, the resources it owns until then, and the listener that closes it
 * when the SparkContext it was initialized under ends (Spark 3.5 never closes catalogs itself).
 */
final class CatalogLifecycle {
  private SparkContext context;
  private SparkListener closeOnEnd;
  private boolean closed;
  /** What components acting for the catalog keep with it (caches), closed with it. */
  private final Map<Class<?>, AutoCloseable> resources = new LinkedHashMap<>();

  /** When a SparkContext runs, {@code close} runs as it ends. */
  void closeWithSparkContext(Runnable close) {
    scala.Option<SparkSession> session = SparkSession.getActiveSession();
    if (session.isEmpty()) {
      session = SparkSession.getDefaultSession();
    }
    if (session.isEmpty() || session.get().sparkContext().isStopped()) {
      return;
    }
    SparkContext sc = session.get().sparkContext();
    SparkListener listener = new CloseOnApplicationEnd(close);
    synchronized (this) {
      context = sc;
      closeOnEnd = listener;
    }
    sc.addSparkListener(listener);
  }

  /** Closes its catalog when the SparkContext ends. */
  private static final class CloseOnApplicationEnd extends SparkListener {
    private final Runnable close;

    CloseOnApplicationEnd(Runnable close) {
      this.close = close;
    }

    @Override
    public void onApplicationEnd(SparkListenerApplicationEnd end) {
      close.run();
    }
  }

  /** See {@link LanceRestCatalog#resource}; {@code name} is the catalog's. */
  <T extends AutoCloseable> T resource(String name, Class<T> type, Supplier<T> create) {
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("Catalog " + name + " is closed (closed by its owner, or "
            + "its SparkContext stopped); use a catalog of a running session");
      }
      // under the lifecycle's lock, as close() takes the resources: none is made after it
      return type.cast(resources.computeIfAbsent(type, t -> create.get()));
    }
  }

  /**
   * Marks the catalog closed and detaches it from its SparkContext; false when it already was.
   */
  boolean beginClose() {
    SparkContext sc;
    SparkListener listener;
    synchronized (this) {
      if (closed) {
        return false;
      }
      closed = true;
      sc = context;
      listener = closeOnEnd;
      context = null;
      closeOnEnd = null;
    }
    // Closed by hand while the context runs: its listener bus must not keep this catalog.
    if (sc != null && !sc.isStopped()) {
      sc.removeSparkListener(listener);
    }
    return true;
  }

  /** Closes every owned resource; a failure is logged and the others still close. */
  void closeResources(String name) {
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
}
