package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One refresh running per view and one behind it, a bounded queue, 503 beyond it; no Spark. */
class RefreshQueueTest {
  private static final List<String> A = List.of("ns", "a");
  private static final List<String> B = List.of("ns", "b");
  private static final List<String> C = List.of("ns", "c");

  @Test
  void aViewHasOneRefreshAndAFullQueueIs503WithRetryAfter() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch startedA = new CountDownLatch(1);
    try (RefreshQueue q = new RefreshQueue(1, 1, (view, options, by) -> {
      if (view.equals(A)) {
        startedA.countDown();
      }
      hold(release);
    })) {
      RefreshQueue.Submitted a = q.submit(A, RefreshOptions.DEFAULTS, "service");
      assertTrue(startedA.await(30, TimeUnit.SECONDS), "the refresh of a did not start");
      RefreshQueue.Submitted again = q.submit(A, RefreshOptions.DEFAULTS, "service");
      assertFalse(again.existing(), "a runs: a second request for a gets a refresh after it");
      assertEquals(new RefreshQueue.Submitted(again.jobId(), true),
          q.submit(A, RefreshOptions.DEFAULTS, "service"), "a third request joins the second");
      RefreshQueue.Submitted b = q.submit(B, RefreshOptions.DEFAULTS, "auto");
      assertFalse(q.job(b.jobId()).orElseThrow().started(), "b waits");
      assertTrue(q.job(a.jobId()).orElseThrow().started(), "a runs");
      ServiceError full = assertThrows(ServiceError.class,
          () -> q.submit(C, RefreshOptions.DEFAULTS, "service"));
      assertEquals(503, full.status);
      assertEquals(10, full.retryAfterSeconds);
      assertTrue(full.getMessage().contains("retry later"), full.getMessage());
      assertFalse(q.busy(C), "a refused request leaves nothing behind");

      release.countDown();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while ((q.busy(A) || q.busy(B)) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertFalse(q.busy(A) || q.busy(B), "the refreshes did not end within 30 s");
      RefreshQueue.Submitted next = q.submit(A, RefreshOptions.DEFAULTS, "service");
      assertFalse(next.existing());
      assertNotEquals(a.jobId(), next.jobId());
    }
  }

  @Test
  void aFailedRefreshFreesItsViewAndTheGivenJobIdIsKept() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    try (RefreshQueue q = new RefreshQueue(1, 0, (view, options, by) -> {
      assertEquals("job-1", options.jobId());
      ran.countDown();
      throw new IllegalStateException("boom");
    })) {
      RefreshQueue.Submitted s = q.submit(A, RefreshOptions.builder().jobId("job-1").build(),
          "service");
      assertEquals("job-1", s.jobId());
      assertTrue(ran.await(30, TimeUnit.SECONDS), "the refresh did not run");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (q.busy(A) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertFalse(q.busy(A), "a failed refresh still holds its view");
      // job/describe answers it from here when the job log never recorded it
      assertEquals("IllegalStateException: boom", q.ended("job-1").orElseThrow().message());
    }
  }

  /**
   * A request made while the view's refresh runs is answered by a refresh that starts after
   * that one ends: the running one may have read the source before the caller's commit.
   */
  @Test
  void aRequestWhileTheViewsRefreshRunsIsAnsweredByOneThatStartsAfterIt() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch startedFirst = new CountDownLatch(1);
    List<String> events = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    try (RefreshQueue q = new RefreshQueue(2, 2, (view, options, by) -> {
      events.add("start " + options.jobId());
      if (options.jobId().equals("first")) {
        startedFirst.countDown();
        hold(release);
      }
      events.add("end " + options.jobId());
    })) {
      q.submit(A, RefreshOptions.builder().jobId("first").build(), "service");
      assertTrue(startedFirst.await(30, TimeUnit.SECONDS), "the first refresh did not start");
      // (the caller commits to the source here, then asks)
      RefreshQueue.Submitted asked = q.submit(A, RefreshOptions.builder().jobId("second")
          .build(), "service");
      assertEquals(new RefreshQueue.Submitted("second", false), asked);
      assertFalse(q.job("second").orElseThrow().started(), "it waits for the running one");
      assertEquals(new RefreshQueue.Submitted("second", true),
          q.submit(A, RefreshOptions.DEFAULTS, "auto"), "later requests join it");
      assertEquals(List.of("start first"), List.copyOf(events), "nothing else ran meanwhile");

      release.countDown();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (q.busy(A) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertFalse(q.busy(A), "the two refreshes of a did not end within 30 s: " + events);
      assertEquals(List.of("start first", "end first", "start second", "end second"),
          List.copyOf(events), "one after the other, never at once");
      assertTrue(q.job("second").isEmpty(), "both ended");
    }
  }

  /** Holds a worker until the test releases it (30 s at most). */
  private static void hold(CountDownLatch release) {
    try {
      assertTrue(release.await(30, TimeUnit.SECONDS), "never released");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void awaitIdle(RefreshQueue q, List<String> view) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (q.busy(view) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertFalse(q.busy(view), "the refreshes of " + view + " did not end within 30 s");
  }

  /** A failed refresh, even one whose message cannot be read, still hands over to the next. */
  @Test
  void theRefreshBehindAFailedOneRunsAndFreesTheView() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch startedFirst = new CountDownLatch(1);
    List<String> ran = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    try (RefreshQueue q = new RefreshQueue(1, 0, (view, options, by) -> {
      ran.add(options.jobId());
      if (options.jobId().equals("first")) {
        startedFirst.countDown();
        hold(release);
        throw new IllegalStateException() {
          @Override
          public String getMessage() {
            throw new IllegalStateException("no message either");
          }
        };
      }
    })) {
      q.submit(A, RefreshOptions.builder().jobId("first").build(), "service");
      assertTrue(startedFirst.await(30, TimeUnit.SECONDS), "the first refresh did not start");
      q.submit(A, RefreshOptions.builder().jobId("second").build(), "service");
      release.countDown();
      awaitIdle(q, A);
      assertEquals(List.of("first", "second"), List.copyOf(ran));
    }
  }

  @Test
  void aRequestForAnotherSourceVersionDoesNotJoinAWaitingRefresh() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    try (RefreshQueue q = new RefreshQueue(1, 1, (view, options, by) -> {
      started.countDown();
      hold(release);
    })) {
      q.submit(A, RefreshOptions.DEFAULTS, "service");
      assertTrue(started.await(30, TimeUnit.SECONDS), "the first refresh did not start");
      RefreshQueue.Submitted next = q.submit(A, RefreshOptions.DEFAULTS, "service");
      ServiceError pinned = assertThrows(ServiceError.class,
          () -> q.submit(A, RefreshOptions.builder().srcVersion(3L).build(), "service"));
      assertEquals(409, pinned.status);
      assertEquals("View ns.a has a refresh waiting (job " + next.jobId() + ") to the latest "
          + "source version; ask for src_version 3 again once it has started",
          pinned.getMessage());
      release.countDown();
      awaitIdle(q, A);
    }
  }

  /** Stopping drops what waits, says so for every id it answered, and takes nothing more. */
  @Test
  void closingDropsTheWaitingRefreshesWithAReasonAndRefusesNewOnes() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    RefreshQueue q = new RefreshQueue(1, 1, (view, options, by) -> {
      started.countDown();
      hold(release);
    });
    try {
      q.submit(A, RefreshOptions.builder().jobId("running").build(), "service");
      assertTrue(started.await(30, TimeUnit.SECONDS), "the first refresh did not start");
      q.submit(A, RefreshOptions.builder().jobId("behind").build(), "service");
      q.submit(B, RefreshOptions.builder().jobId("queued").build(), "service");
      q.close();
      assertFalse(q.busy(B), "the queued refresh of b is dropped");
      assertEquals("the service stopped before this refresh started; ask for it again",
          q.ended("queued").orElseThrow().message());
      ServiceError refused = assertThrows(ServiceError.class,
          () -> q.submit(C, RefreshOptions.DEFAULTS, "service"));
      assertEquals(503, refused.status);
      release.countDown();
      awaitIdle(q, A);
      assertEquals("the service stopped before this refresh started; ask for it again",
          q.ended("behind").orElseThrow().message());
    } finally {
      release.countDown();
      q.close();
    }
  }

  @Test
  void aWaitingRefreshIsRecordedAndCanBeCancelledBeforeItRuns() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch startedA = new CountDownLatch(1);
    List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<String> ledger = new java.util.concurrent.CopyOnWriteArrayList<>();
    RefreshQueue.Ledger records = new RefreshQueue.Ledger() {
      @Override
      public void waiting(RefreshQueue.Entry e) {
        ledger.add("SUBMITTED " + e.jobId());
      }

      @Override
      public void endedWaiting(RefreshQueue.Ended e) {
        ledger.add(e.status() + " " + e.jobId() + ": " + e.message());
      }
    };
    try (RefreshQueue q = new RefreshQueue(1, 2, (view, options, by) -> {
      ran.add(options.jobId());
      if (view.equals(A)) {
        startedA.countDown();
        hold(release);
      }
    }, records)) {
      RefreshQueue.Submitted a = q.submit(A, RefreshOptions.DEFAULTS, "service");
      assertTrue(startedA.await(30, TimeUnit.SECONDS), "the refresh of a did not start");
      RefreshQueue.Submitted b = q.submit(B, RefreshOptions.DEFAULTS, "service");
      RefreshQueue.Submitted next = q.submit(A, RefreshOptions.DEFAULTS, "service");
      assertEquals(List.of("SUBMITTED " + b.jobId(), "SUBMITTED " + next.jobId()), ledger,
          "the refreshes that wait are recorded; the one that started at once is not");

      assertEquals(RefreshQueue.Cancel.RUNNING, q.cancel(a.jobId(), A), "a runs: the engine "
          + "cancels it");
      assertEquals(RefreshQueue.Cancel.NOT_HELD, q.cancel(b.jobId(), A), "b is not a's job");
      RefreshQueue.Cancel cb = q.cancel(b.jobId(), B);
      assertEquals(RefreshResult.JobStatus.CANCELLED, cb.ended().status());
      assertEquals(RefreshResult.JobStatus.CANCELLED, q.cancel(next.jobId(), A).ended()
          .status(), "the follow-up of a running refresh can be cancelled too");
      assertFalse(q.busy(B), "a cancelled refresh leaves its view free");
      assertEquals(RefreshResult.JobStatus.CANCELLED, q.ended(b.jobId()).orElseThrow().status());

      release.countDown();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (q.busy(A) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertFalse(q.busy(A), "a's refresh did not end within 30 s");
      assertEquals(List.of(a.jobId()), ran, "the cancelled refreshes never ran");
      assertEquals("CANCELLED " + b.jobId() + ": cancelled before it started (CANCEL JOB)",
          ledger.get(2));
    }
  }
}
