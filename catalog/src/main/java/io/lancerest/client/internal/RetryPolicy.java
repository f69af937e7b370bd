package io.lancerest.client.internal;

import io.lancerest.client.spec.Operation;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.ThreadLocalRandom;
import javax.net.ssl.SSLException;

/**
 * Decides, per operation, whether a failed attempt is retried and after how long.
 *
 * <ul>
 *   <li>429: every operation (the server refused before doing anything).
 *   <li>503: reads always; mutations only when the server sent {@code Retry-After}, which says
 *       the request was not processed.
 *   <li>other 5xx and 408, connection resets and timeouts: reads only. A mutation that failed
 *       this way may have been applied: repeating it could turn success into a false conflict.
 *   <li>connection refused, and a pooled connection found closed before the request was
 *       written: every operation (nothing reached the server).
 *   <li>TLS and unknown-host errors: never (repeating cannot help).
 * </ul>
 *
 * Backoff is exponential with jitter, capped, and {@code Retry-After} (seconds or HTTP date)
 * takes precedence when present.
 */
public final class RetryPolicy {
  private static final Duration RETRY_AFTER_CAP = Duration.ofMinutes(2);
  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final Clock clock;

  public RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Clock clock) {
    this.maxAttempts = maxAttempts;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
    this.clock = clock;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  /** Whether a response with {@code status} is retried for {@code op}. */
  public boolean shouldRetry(Operation op, int status, String retryAfter) {
    if (status == 429) {
      return true;
    }
    if (status == 503) {
      return op.isRead() || retryAfter != null;
    }
    if (status == 408 || (status >= 500 && status != 501)) {
      return op.isRead();
    }
    return false;
  }

  /** Whether a failure to get a response is retried for {@code op}. */
  public boolean shouldRetry(Operation op, IOException e) {
    if (e instanceof SSLException || e instanceof UnknownHostException) {
      return false;
    }
    if (e instanceof ConnectException || e instanceof StaleConnections.StaleConnectionException) {
      return true; // nothing reached the server
    }
    if (e instanceof InterruptedIOException && !(e instanceof java.net.SocketTimeoutException)) {
      // The whole-call timeout (or a thread interrupt): give up, whatever the operation.
      return false;
    }
    return op.isRead();
  }

  /** How long to wait before attempt {@code attempt + 1} (attempt counts from 1). */
  public Duration backoff(int attempt, String retryAfter) {
    Duration fromHeader = parseRetryAfter(retryAfter);
    if (fromHeader != null) {
      return fromHeader.compareTo(RETRY_AFTER_CAP) > 0 ? RETRY_AFTER_CAP : fromHeader;
    }
    long initial = initialBackoff.toMillis();
    long max = maxBackoff.toMillis();
    int shift = Math.min(Math.max(attempt - 1, 0), 62);
    // Compare before shifting: a large initial backoff shifted left would overflow to negative.
    long capped = initial > (max >> shift) ? max : initial << shift;
    // "equal jitter": half fixed, half random, so waits never collapse to zero.
    long jitter = capped / 2 == 0 ? 0 : ThreadLocalRandom.current().nextLong(capped / 2 + 1);
    return Duration.ofMillis(capped - capped / 2 + jitter);
  }

  /** Retry-After as seconds or as an HTTP date; null when absent or unreadable. */
  Duration parseRetryAfter(String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    String v = value.trim();
    try {
      long seconds = Long.parseLong(v);
      return Duration.ofSeconds(Math.max(0, seconds));
    } catch (NumberFormatException ignored) {
      // not seconds: try an HTTP date
    }
    try {
      ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
      Duration d = Duration.between(clock.instant(), at.toInstant());
      return d.isNegative() ? Duration.ZERO : d;
    } catch (RuntimeException ignored) {
      return null;
    }
  }
}
