package io.lancerest.spark.catalog.shared;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Shared resources counted by their holders, without Spark: one per key for every lease, closed
 * once when the last lease goes, by hand or because its holder was collected; closing them all
 * ends the reaper's thread.
 */
class ResourceSharesTest {
  private static final Duration GC_WAIT = Duration.ofSeconds(30);
  private final ResourceShares shares = new ResourceShares("test-reaper");

  /** A resource that counts how often it was closed. */
  static final class Counted implements AutoCloseable {
    final AtomicInteger closes = new AtomicInteger();

    @Override
    public void close() {
      closes.incrementAndGet();
    }
  }

  /** Another type, to see that a key's resources close the last made first. */
  static final class Second implements AutoCloseable {
    final Counted first;
    final List<String> order;

    Second(Counted first, List<String> order) {
      this.first = first;
      this.order = order;
    }

    @Override
    public void close() {
      order.add(first.closes.get() == 0 ? "second before first" : "second after first");
    }
  }

  @AfterEach
  void close() {
    shares.close();
  }

  /** Collects garbage until {@code done}, for at most {@link #GC_WAIT}; fails naming {@code what}. */
  static void awaitAfterGc(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + GC_WAIT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("Waited " + GC_WAIT.toSeconds() + " s, collecting garbage every 100 ms, for " + what);
      }
      System.gc();
      Thread.sleep(100);
    }
  }

  @Test
  void theLeasesOfOneKeyShareOneResourceUntilTheLastIsReleased() {
    Object a = new Object();
    Object b = new Object();
    Lease la = shares.lease(a, "key", "Catalog k");
    Lease lb = shares.lease(b, "key", "Catalog k");
    Counted made = la.get(Counted.class, Counted::new);
    assertSame(made, lb.get(Counted.class, () -> fail("made twice")));
    List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
    lb.get(Second.class, () -> new Second(made, order));

    la.release();
    la.release(); // idempotent: one lease gives up one hold
    assertEquals(0, made.closes.get(), "b still holds them");
    assertTrue(lb.isOpen());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> la.get(Counted.class, Counted::new));
    assertEquals("This lease of shared resources was released", e.getMessage());

    lb.release();
    assertEquals(1, made.closes.get(), "the last release closed them, once");
    assertEquals(List.of("second before first"), order, "the last made closes first");
    assertFalse(lb.isOpen());
    assertEquals(0, shares.size());
    assertEquals(0, shares.reaper().pending(), "released leases are no longer watched");

    Lease again = shares.lease(a, "key", "Catalog k");
    assertNotSame(made, again.get(Counted.class, Counted::new), "a new first lease makes anew");
  }

  @Test
  void keysShareNothing() {
    Lease one = shares.lease(new Object(), "one", "Catalog one");
    Lease two = shares.lease(new Object(), "two", "Catalog two");
    Counted c1 = one.get(Counted.class, Counted::new);
    assertNotSame(c1, two.get(Counted.class, Counted::new));
    two.release();
    assertEquals(0, c1.closes.get());
    assertEquals(1, shares.size());
  }

  @Test
  void aHolderThatIsCollectedGivesUpItsLease() throws InterruptedException {
    Object kept = new Object();
    Lease keptLease = shares.lease(kept, "key", "Catalog k");
    Counted made = keptLease.get(Counted.class, Counted::new);
    leaseForAHolderNobodyKeeps();

    awaitAfterGc("the reaper to release the lease of the collected holder",
        () -> shares.reaper().pending() == 1);
    assertEquals(0, made.closes.get(), "the kept holder still holds them");
    assertTrue(keptLease.isOpen());

    kept = null;
    awaitAfterGc("the reaper to release the last lease, of the second collected holder",
        () -> made.closes.get() == 1);
    assertEquals(0, shares.size());
  }

  private void leaseForAHolderNobodyKeeps() {
    shares.lease(new Object(), "key", "Catalog k").get(Counted.class, Counted::new);
  }

  @Test
  void closingClosesEveryKeyEndsTheReaperThreadAndRefusesLaterLeases() throws Exception {
    Object holder = new Object();
    Counted one = shares.lease(holder, "one", "Catalog one").get(Counted.class, Counted::new);
    Counted two = shares.lease(holder, "two", "Catalog two").get(Counted.class, Counted::new);
    Thread reaper = reaperThread();
    assertTrue(reaper.isAlive());

    shares.close();
    shares.close(); // idempotent

    assertEquals(1, one.closes.get());
    assertEquals(1, two.closes.get());
    reaper.join(10_000);
    assertFalse(reaper.isAlive(), "the reaper's thread ended with its shares");
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> shares.lease(holder, "one", "Catalog one"));
    assertEquals("Catalog one is closed (its SparkContext stopped); use a catalog of a running "
        + "session", e.getMessage());
  }

  @Test
  void aLeaseOfClosedResourcesRefusesToMakeMore() {
    Lease l = shares.lease(new Object(), "key", "Catalog k");
    shares.close();
    assertFalse(l.isOpen());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> l.get(Counted.class, Counted::new));
    assertEquals("Catalog k is closed (closed by its owner, or its SparkContext stopped); use a "
        + "catalog of a running session", e.getMessage());
  }

  @Test
  void theReaperThreadHasNoneOfTheThreadLocalsOfTheThreadThatStartedIt() throws Exception {
    InheritableThreadLocal<String> session = new InheritableThreadLocal<>();
    session.set("the caller's session");
    CompletableFuture<String> seen = new CompletableFuture<>();
    try {
      AutoCloseable probe = () -> seen.complete(String.valueOf(session.get()));
      shares.lease(new Object(), "key", "Catalog k").get(AutoCloseable.class, () -> probe);
    } finally {
      session.remove();
    }
    awaitAfterGc("the reaper to close what the collected holder leased", seen::isDone);
    assertEquals("null", seen.get(1, TimeUnit.SECONDS),
        "the reaper's thread did not inherit the caller's session");
  }

  @Test
  void anUnsharedLeaseClosesItsResourcesWhenReleased() {
    Lease l = ResourceShares.unshared("Catalog alone");
    Counted c = l.get(Counted.class, Counted::new);
    l.release();
    assertEquals(1, c.closes.get());
    assertNull(reaperThreadOrNull("Catalog alone"), "no thread of its own");
  }

  private static Thread reaperThread() {
    Thread t = reaperThreadOrNull("test-reaper");
    if (t == null) {
      fail("no thread named test-reaper runs");
    }
    return t;
  }

  private static Thread reaperThreadOrNull(String name) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name))
        .findFirst().orElse(null);
  }
}
