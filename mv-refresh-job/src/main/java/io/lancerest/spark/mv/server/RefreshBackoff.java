package io.lancerest.spark.mv.server;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How long auto refresh leaves a view alone after its refreshes failed: {@code first} after one
 * failure, twice as long after each further failure in a row, never more than {@code max}. A
 * refresh that succeeds, or a change of the view's definition, clears the view's failures.
 * Refreshes asked for by a caller run at once whatever this says; their outcome counts too.
 * Kept in memory: a restarted service tries every view again.
 */
final class RefreshBackoff {
  /**
   * A view's failures in a row.
   *
   * @param failures refreshes that failed since the last one that succeeded
   * @param lastFailureAt when the last one failed (epoch ms)
   * @param nextAttemptAt the earliest time auto refresh tries the view again (epoch ms)
   * @param lastError what the last failure said (secrets masked)
   */
  record State(int failures, long lastFailureAt, long nextAttemptAt, String lastError) {}

  private final long firstMillis;
  private final long maxMillis;
  private final Map<List<String>, State> failing = new HashMap<>();

  RefreshBackoff(Duration first, Duration max) {
    if (first.isNegative() || max.compareTo(first) < 0) {
      throw new IllegalArgumentException("the backoff needs 0 <= first <= max, got first "
          + first + ", max " + max);
    }
    this.firstMillis = first.toMillis();
    this.maxMillis = max.toMillis();
  }

  /** The wait after {@code failures} failures in a row (at least one). */
  long delayMillis(int failures) {
    long d = firstMillis;
    for (int i = 1; i < failures && d < maxMillis; i++) {
      d = d > maxMillis / 2 ? maxMillis : d * 2;
    }
    return Math.min(d, maxMillis);
  }

  /** Records a failed refresh of {@code view} at {@code now}; returns the view's new state. */
  synchronized State failed(List<String> view, long now, String error) {
    State before = failing.get(view);
    int n = before == null ? 1 : before.failures() + 1;
    State s = new State(n, now, now + delayMillis(n), error);
    failing.put(List.copyOf(view), s);
    return s;
  }

  /** Clears {@code view}'s failures: a refresh succeeded, or the view is not what failed. */
  synchronized void reset(List<String> view) {
    failing.remove(view);
  }

  /** Whether auto refresh may try {@code view} at {@code now}. */
  synchronized boolean due(List<String> view, long now) {
    State s = failing.get(view);
    return s == null || now >= s.nextAttemptAt();
  }

  /** The view's failures in a row; empty when its last refresh did not fail. */
  synchronized Optional<State> state(List<String> view) {
    return Optional.ofNullable(failing.get(view));
  }
}
