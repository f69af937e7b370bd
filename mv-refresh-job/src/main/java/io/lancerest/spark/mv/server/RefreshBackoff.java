package io.lancerest.spark.mv.server;

import io.lancerest.client.error.CommunicationException;
import io.lancerest.client.error.ConflictException;
import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.client.error.ThrottledException;
import io.lancerest.spark.mv.commit.ViewCommitConflictException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How long auto refresh leaves a view alone after its refreshes failed: {@code first} after one
 * failure, twice as long after each further failure in a row, never more than {@code max}. A
 * failure that says nothing of the view ({@link #passing}: the upstream unreachable or busy,
 * another writer committing first) is counted apart and only waits {@code first}, so that an
 * outage does not leave every view it touched waiting hours once it is over. A refresh that
 * succeeds, or a change of the view's definition, clears the view's failures. Kept in memory: a
 * restarted service tries every view again.
 */
final class RefreshBackoff {
  /**
   * A view's failures since its last refresh that succeeded.
   *
   * @param failures failures in a row that say something is wrong with the view; they set the
   *     doubling wait
   * @param passingFailures failures for a passing cause ({@link #passing}), which do not
   * @param lastFailureAt when the last one failed (epoch ms)
   * @param nextAttemptAt the earliest time auto refresh tries the view again (epoch ms)
   * @param lastError what the last failure said (secrets masked)
   */
  record State(int failures, int passingFailures, long lastFailureAt, long nextAttemptAt,
      String lastError) {}

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

  /**
   * Whether a refresh failed for a cause that passes by itself and says nothing of the view:
   * the upstream could not be reached, was unavailable or throttled the service, or another
   * writer changed the view first (a commit conflict, a concurrent refresh). A failure of the
   * object store is not among them: it may as well be a lasting one (no right to write).
   */
  static boolean passing(Throwable failure) {
    for (Throwable c = failure; c != null; c = c.getCause()) {
      if (c instanceof CommunicationException || c instanceof ServiceUnavailableException
          || c instanceof ThrottledException || c instanceof ConflictException
          || c instanceof ViewCommitConflictException
          || c instanceof java.net.ConnectException
          || c instanceof java.net.SocketTimeoutException
          || c instanceof ServiceError s && s.status == 503) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return false;
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
    State s = new State(n, before == null ? 0 : before.passingFailures(), now,
        now + delayMillis(n), error);
    failing.put(List.copyOf(view), s);
    return s;
  }

  /**
   * Records a refresh of {@code view} that failed for a passing cause: counted apart, the view
   * is tried again after the first wait (or the longer one its other failures set).
   */
  synchronized State failedPassing(List<String> view, long now, String error) {
    State before = failing.get(view);
    State s = before == null ? new State(0, 1, now, now + firstMillis, error)
        : new State(before.failures(), before.passingFailures() + 1, now,
            Math.max(before.nextAttemptAt(), now + firstMillis), error);
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

  /** The view's failures since its last refresh that succeeded; empty when there are none. */
  synchronized Optional<State> state(List<String> view) {
    return Optional.ofNullable(failing.get(view));
  }
}
