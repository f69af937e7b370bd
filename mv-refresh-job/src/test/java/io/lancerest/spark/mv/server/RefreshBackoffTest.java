package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The wait after failed refreshes: doubling, bounded, per view, cleared on success. No Spark. */
class RefreshBackoffTest {
  private static final List<String> A = List.of("ns", "a");
  private static final List<String> B = List.of("ns", "b");

  @Test
  void theWaitDoublesWithEachFailureInARowUpToTheMaximum() {
    RefreshBackoff b = new RefreshBackoff(Duration.ofMinutes(1), Duration.ofHours(6));
    assertEquals(List.of(60_000L, 120_000L, 240_000L, 480_000L),
        List.of(b.delayMillis(1), b.delayMillis(2), b.delayMillis(3), b.delayMillis(4)));
    assertEquals(Duration.ofHours(6).toMillis(), b.delayMillis(10));
    assertEquals(Duration.ofHours(6).toMillis(), b.delayMillis(Integer.MAX_VALUE));

    long now = 1_000_000;
    assertTrue(b.due(A, now), "a view that never failed is due");
    RefreshBackoff.State first = b.failed(A, now, "IllegalStateException: cannot chunk BOOM");
    assertEquals(new RefreshBackoff.State(1, 0, now, now + 60_000,
        "IllegalStateException: cannot chunk BOOM"), first);
    assertFalse(b.due(A, now + 59_999));
    assertTrue(b.due(A, now + 60_000));
    assertTrue(b.due(B, now), "another view's failures do not delay it");

    RefreshBackoff.State second = b.failed(A, now + 70_000, "again");
    assertEquals(2, second.failures());
    assertEquals(now + 70_000 + 120_000, second.nextAttemptAt());
    assertEquals(Optional.of(second), b.state(A));

    b.reset(A);
    assertEquals(Optional.empty(), b.state(A));
    assertTrue(b.due(A, now + 70_001), "a success clears the wait");
    assertEquals(1, b.failed(A, now + 80_000, "once more").failures(), "counting starts again");
  }

  @Test
  void aPassingFailureWaitsTheFirstStepWithoutCountingAgainstTheView() {
    RefreshBackoff b = new RefreshBackoff(Duration.ofMinutes(1), Duration.ofHours(1));
    long now = 1_000_000;
    for (int i = 1; i <= 10; i++) {
      RefreshBackoff.State s = b.failedPassing(A, now, "ServiceUnavailableException: 503");
      assertEquals(new RefreshBackoff.State(0, i, now, now + 60_000,
          "ServiceUnavailableException: 503"), s, "after " + i + " passing failures");
    }
    b.failed(A, now, "x");
    b.failed(A, now, "x");
    b.failed(A, now, "x"); // 4 min
    RefreshBackoff.State s = b.failedPassing(A, now + 1, "conflict");
    assertEquals(3, s.failures());
    assertEquals(now + 240_000, s.nextAttemptAt(), "a passing failure shortens no wait");
  }

  @Test
  void passingCausesAreTheUpstreamsOutagesAndOtherWritersNotTheViewsOwn() {
    io.lancerest.client.error.ErrorDetails d = new io.lancerest.client.error.ErrorDetails(
        "x", null, null, 0, null, null, null, null);
    assertTrue(RefreshBackoff.passing(new RuntimeException("wrapped",
        new io.lancerest.client.error.CommunicationException(d, false, null))));
    assertTrue(RefreshBackoff.passing(new io.lancerest.client.error.ServiceUnavailableException(
        d)));
    assertTrue(RefreshBackoff.passing(new io.lancerest.client.error.ThrottledException(d)));
    assertTrue(RefreshBackoff.passing(new io.lancerest.spark.mv.error.MaterializedViewException(
        "gave up", new io.lancerest.spark.mv.commit.ViewCommitConflictException("v 3", null))));
    assertFalse(RefreshBackoff.passing(new IllegalStateException("cannot chunk BOOM")));
    assertFalse(RefreshBackoff.passing(new io.lancerest.client.error.ForbiddenException(d)),
        "a refusal lasts until someone acts");
    assertFalse(RefreshBackoff.passing(
        new io.lancerest.spark.mv.commit.ViewCommitNotAppliedException("store refused", null)),
        "the object store's refusal may last");
  }

  @Test
  void aMaximumBelowTheFirstWaitIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RefreshBackoff(Duration.ofMinutes(5), Duration.ofMinutes(1)));
    assertTrue(e.getMessage().contains("0 <= first <= max"), e.getMessage());
    RefreshBackoff none = new RefreshBackoff(Duration.ZERO, Duration.ZERO);
    none.failed(A, 5, "x");
    assertTrue(none.due(A, 5), "a zero wait retries at the next poll");
  }
}
