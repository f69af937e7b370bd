package io.lancerest.spark.catalog.shared;

import java.lang.ref.WeakReference;
import java.time.Duration;
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
 *
 * <p>It listens on a queue of its own: Spark's shared queue drops events when it is full, and
 * the end of the application must not be among them. Should it still be lost, the shares' own
 * thread sees the stopped context within {@link #CHECK_EVERY} and closes them.
 */
public final class ContextResources extends SparkListener {
  /** The name of the thread that releases the shares of collected catalogs. */
  public static final String REAPER_THREAD = "lancerest-catalog-reaper";
  /** The listener bus queue this listener has to itself. */
  public static final String QUEUE = "lancerest";
  /** How long a new session waits for what its configuration's previous ones shared to close. */
  static final Duration CLOSE_WAIT = Duration.ofSeconds(30);
  /** How often the shares' thread looks whether the context has stopped. */
  static final Duration CHECK_EVERY = Duration.ofSeconds(5);
  /** How long attaching to the bus may take (it takes the bus's lock). */
  private static final Duration ATTACH_WAIT = Duration.ofSeconds(60);

  private final ResourceShares shares;

  private ContextResources(SparkContext sc) {
    // Weakly: the thread that asks must not keep a stopped context.
    WeakReference<SparkContext> context = new WeakReference<>(sc);
    this.shares = new ResourceShares(REAPER_THREAD, CLOSE_WAIT, CHECK_EVERY, () -> {
      SparkContext c = context.get();
      return c == null || c.isStopped();
    });
  }

  /**
   * The shares of {@code sc}'s catalogs, attached to it on first use; {@code null} once it has
   * stopped.
   */
  public static ResourceShares of(SparkContext sc) {
    if (sc.isStopped()) {
      return null;
    }
    LiveListenerBus bus = sc.listenerBus();
    ResourceShares found = find(bus);
    if (found != null) {
      return found;
    }
    // Adding a queue starts its thread, and the caller is a session's thread.
    return Detached.call("lancerest-catalog-attach", ATTACH_WAIT, () -> attach(sc, bus));
  }

  private static ResourceShares find(LiveListenerBus bus) {
    for (SparkListenerInterface l : bus.listeners()) {
      if (l instanceof ContextResources c) {
        return c.shares;
      }
    }
    return null;
  }

  private static ResourceShares attach(SparkContext sc, LiveListenerBus bus) {
    // The bus's own lock, which Spark takes to add and remove listeners: two catalogs starting
    // at once cannot both attach one.
    synchronized (bus) {
      ResourceShares found = find(bus);
      if (found != null) {
        return found;
      }
      ContextResources c = new ContextResources(sc);
      try {
        bus.addToQueue(c, QUEUE);
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
