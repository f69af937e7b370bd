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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Shared resources counted by their holders, without Spark: one per key for every lease, closed
 * once when the last lease goes, by hand or because its holder was collected; a key made anew
 * waits for its previous resources to close; closing them all, or the end of their owner, ends
 * the reaper's thread.
 */
class ResourceSharesTest {
  private static final Duration GC_WAIT = Duration.ofSeconds(30);
  private final AtomicBoolean ownerEnded = new AtomicBoolean();
  private final ResourceShares shares = new ResourceShares("test-reaper", Duration.ofSeconds(20),
      Duration.ofMillis(50), ownerEnded::get);

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

  /** Waits until {@code done}, for at most 10 s; fails naming {@code what}. */
  static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + 10_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("Waited 10 s for " + what);
      }
      Thread.sleep(10);
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

  /** A resource of one key that counts the key's open ones, and takes a while to close. */
  static final class PerKey implements AutoCloseable {
    final AtomicInteger openOfKey;
    volatile boolean closed;

    PerKey(AtomicInteger openOfKey) {
      this.openOfKey = openOfKey;
      openOfKey.incrementAndGet();
    }

    @Override
    public void close() throws InterruptedException {
      Thread.sleep(1); // a relay's server and threads take a moment to let go
      closed = true;
      openOfKey.decrementAndGet();
    }
  }

  @Test
  void leasesRacingReleasesMakeAtMostOneResourceAKeyAtATimeAndCloseEachOnce() throws Exception {
    int threads = 6;
    int rounds = 300;
    List<String> keys = List.of("a", "b", "c");
    Map<String, AtomicInteger> open = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> mostOpen = new ConcurrentHashMap<>();
    List<PerKey> made = java.util.Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> runs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        runs.add(pool.submit(() -> {
          go.await();
          for (int i = 0; i < rounds; i++) {
            String key = keys.get((first + i) % keys.size());
            AtomicInteger n = open.computeIfAbsent(key, k -> new AtomicInteger());
            Lease l = shares.lease(new Object(), key, "Catalog " + key);
            PerKey r = l.get(PerKey.class, () -> {
              PerKey p = new PerKey(n);
              made.add(p);
              return p;
            });
            mostOpen.computeIfAbsent(key, k -> new AtomicInteger()).accumulateAndGet(n.get(),
                Math::max);
            assertFalse(r.closed, "a lease got the resources of its key after they closed");
            if (i % 3 == 0) {
              Thread.yield();
            }
            l.release();
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> run : runs) {
        run.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    for (String key : keys) {
      assertEquals(1, mostOpen.get(key).get(), "resources of key " + key + " open at once");
      assertEquals(0, open.get(key).get(), "resources of key " + key + " left open");
    }
    assertTrue(made.stream().allMatch(p -> p.closed), "every one made was closed");
    assertEquals(0, shares.size(), "no key left");
    assertEquals(0, shares.reaper().pending(), "no lease left watched");
  }

  /** Closes when {@link #mayClose} is counted down. */
  static final class SlowToClose implements AutoCloseable {
    final CountDownLatch mayClose = new CountDownLatch(1);
    volatile boolean closed;

    @Override
    public void close() throws InterruptedException {
      assertTrue(mayClose.await(30, TimeUnit.SECONDS), "the test let it close");
      closed = true;
    }
  }

  @Test
  void aKeyMadeAnewWaitsForItsPreviousResourcesToClose() throws Exception {
    Lease old = shares.lease(new Object(), "key", "Catalog k");
    SlowToClose previous = old.get(SlowToClose.class, SlowToClose::new);
    CompletableFuture<Void> released = CompletableFuture.runAsync(old::release);
    await("the last release to remove the key (its resources close meanwhile)",
        () -> shares.size() == 0);

    CompletableFuture<Boolean> next = CompletableFuture.supplyAsync(() -> {
      Lease l = shares.lease(new Object(), "key", "Catalog k");
      // a fixed port would be bound here: the previous holder of it must have let it go
      return l.get(Counted.class, Counted::new) != null && previous.closed;
    });
    Thread.sleep(300);
    assertFalse(next.isDone(), "the new lease waits while the previous resources close");
    previous.mayClose.countDown();
    released.get(10, TimeUnit.SECONDS);
    assertTrue(next.get(10, TimeUnit.SECONDS), "made after the previous ones closed");
  }

  @Test
  void aNewLeaseWaitsForAStuckCloseOnlySoLong() throws Exception {
    try (ResourceShares quick = new ResourceShares("test-reaper-quick", Duration.ofMillis(300),
        Duration.ofSeconds(1), () -> false)) {
      Lease old = quick.lease(new Object(), "key", "Catalog k");
      SlowToClose stuck = old.get(SlowToClose.class, SlowToClose::new);
      CompletableFuture<Void> released = CompletableFuture.runAsync(old::release);
      try {
        await("the last release to start closing", () -> quick.size() == 0);
        long t0 = System.nanoTime();
        Lease l = quick.lease(new Object(), "key", "Catalog k");
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(l.isOpen());
        assertFalse(stuck.closed);
        assertTrue(waitedMs >= 250 && waitedMs < 10_000, "waited " + waitedMs + " ms");
      } finally {
        stuck.mayClose.countDown();
        released.get(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void whenTheOwnerHasEndedUnnoticedTheReaperClosesEverything() throws Exception {
    Object holder = new Object();
    Counted made = shares.lease(holder, "key", "Catalog k").get(Counted.class, Counted::new);
    Thread reaper = reaperThread();

    ownerEnded.set(true);

    await("the reaper to see that the owner ended and close the shared resources",
        () -> made.closes.get() == 1);
    reaper.join(10_000);
    assertFalse(reaper.isAlive(), "the reaper's thread ended");
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> shares.lease(holder, "key", "Catalog k"));
    assertEquals("Catalog k is closed (its SparkContext stopped); use a catalog of a running "
        + "session", e.getMessage());
  }

  @Test
  void detachedWorkSeesNoneOfTheCallersThreadLocalsAndItsFailureIsTheCallers() {
    InheritableThreadLocal<String> session = new InheritableThreadLocal<>();
    session.set("the caller's session");
    try {
      assertEquals("null", Detached.call("test-detached", Duration.ofSeconds(10),
          () -> String.valueOf(session.get())));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Detached.call("test-detached", Duration.ofSeconds(10), () -> {
            throw new IllegalArgumentException("bad port");
          }));
      assertEquals("bad port", e.getMessage());
      IllegalStateException late = assertThrows(IllegalStateException.class,
          () -> Detached.call("test-detached", Duration.ofMillis(100), () -> {
            Thread.sleep(2_000);
            return null;
          }));
      assertEquals("test-detached did not finish within 100 ms", late.getMessage());
    } finally {
      session.remove();
    }
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
