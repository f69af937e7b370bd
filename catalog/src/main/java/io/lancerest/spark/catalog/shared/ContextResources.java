package io.lancerest.spark.catalog.shared;

import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.LiveListenerBus;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerInterface;

/**
 * The {@link ResourceShares} of one SparkContext, kept on the context itself: this listener sits
 * on the context's listener bus from the first catalog that needs it until the context stops,
 * and then closes everything shared. Later catalogs find it there, so nothing is JVM-wide, and a
 * context that stops takes it along. The bus is the one place Spark gives to hang state on a
 * context; it holds only this listener, which holds no catalog and no session.
 */
public final class ContextResources extends SparkListener {
  /** The name of the thread that releases the shares of collected catalogs. */
  public static final String REAPER_THREAD = "lancerest-catalog-reaper";

  private final ResourceShares shares = new ResourceShares(REAPER_THREAD);

  private ContextResources() {}

  /**
   * The shares of {@code sc}'s catalogs, attached to it on first use; {@code null} once it has
   * stopped.
   */
  public static ResourceShares of(SparkContext sc) {
    if (sc.isStopped()) {
      return null;
    }
    LiveListenerBus bus = sc.listenerBus();
    // The bus's own lock, which Spark takes to add and remove listeners: two catalogs starting
    // at once cannot both attach one.
    synchronized (bus) {
      for (SparkListenerInterface l : bus.listeners()) {
        if (l instanceof ContextResources c) {
          return c.shares;
        }
      }
      ContextResources c = new ContextResources();
      try {
        bus.addToSharedQueue(c);
      } catch (IllegalStateException stopped) {
        return null; // "LiveListenerBus is stopped"
      }
      return c.shares;
    }
  }

  @Override
  public void onApplicationEnd(SparkListenerApplicationEnd end) {
    shares.close();
  }
}
