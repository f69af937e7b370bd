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
    assertEquals(new RefreshBackoff.State(1, now, now + 60_000,
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
  void aMaximumBelowTheFirstWaitIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new RefreshBackoff(Duration.ofMinutes(5), Duration.ofMinutes(1)));
    assertTrue(e.getMessage().contains("0 <= first <= max"), e.getMessage());
    RefreshBackoff none = new RefreshBackoff(Duration.ZERO, Duration.ZERO);
    none.failed(A, 5, "x");
    assertTrue(none.due(A, 5), "a zero wait retries at the next poll");
  }
}
