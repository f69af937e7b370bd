package io.lancerest.spark.catalog.shared;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * One holder's hold on shared resources ({@link ResourceShares#lease}): the resources through
 * {@link #get}, until {@link #release}, which runs once, by hand or when the holder has become
 * unreachable.
 */
public final class Lease {
  private final SharedResources resources;
  private final Runnable onRelease;
  private final AtomicBoolean released = new AtomicBoolean();
  private volatile Reaper.Registration watch;

  Lease(SharedResources resources, Runnable onRelease) {
    this.resources = resources;
    this.onRelease = onRelease;
  }

  void watch(Reaper.Registration registration) {
    this.watch = registration;
  }

  /**
   * The shared {@code type}, made by {@code create} on first use by any holder; see
   * {@link SharedResources#get}.
   *
   * @throws IllegalStateException once released, or once the resources are closed
   */
  public <T extends AutoCloseable> T get(Class<T> type, Supplier<T> create) {
    if (released.get()) {
      throw new IllegalStateException("This lease of shared resources was released");
    }
    return resources.get(type, create);
  }

  /** Whether the resources can still be used: not released, and not closed by their owner. */
  public boolean isOpen() {
    return !released.get() && !resources.isClosed();
  }

  /** Gives the hold up; the last one closes the resources. Idempotent. */
  public void release() {
    if (!released.compareAndSet(false, true)) {
      return;
    }
    Reaper.Registration w = watch;
    if (w != null) {
      w.cancel();
    }
    onRelease.run();
  }
}
