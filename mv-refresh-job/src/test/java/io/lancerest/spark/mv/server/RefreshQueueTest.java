package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.RefreshOptions;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One refresh per view, a bounded queue, and 503 beyond it; no Spark. */
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
      try {
        assertTrue(release.await(30, TimeUnit.SECONDS), "never released");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    })) {
      RefreshQueue.Submitted a = q.submit(A, RefreshOptions.DEFAULTS, "service");
      assertTrue(startedA.await(30, TimeUnit.SECONDS), "the refresh of a did not start");
      assertEquals(new RefreshQueue.Submitted(a.jobId(), true),
          q.submit(A, RefreshOptions.DEFAULTS, "service"), "a second request for a");
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
}
