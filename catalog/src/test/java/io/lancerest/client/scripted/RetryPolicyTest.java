package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.spec.Operation;
import io.lancerest.client.internal.RetryPolicy;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.Set;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The retry decision and the backoff, without a server. */
class RetryPolicyTest {
  private static final Instant NOW = Instant.parse("2025-03-01T12:00:00Z");
  private final RetryPolicy policy = new RetryPolicy(5, Duration.ofMillis(100),
      Duration.ofMillis(1000), Clock.fixed(NOW, ZoneOffset.UTC));

  @ParameterizedTest(name = "{0}")
  @EnumSource(Operation.class)
  void statusDecisionDependsOnTheOperationOnly(Operation op) {
    assertTrue(policy.shouldRetry(op, 429, null), "429 for every operation");
    assertTrue(policy.shouldRetry(op, 503, "1"), "503 + Retry-After for every operation");
    for (int status : new int[] {500, 502, 503, 504, 408}) {
      assertEquals(op.isRead(), policy.shouldRetry(op, status, null), "HTTP " + status);
    }
    for (int status : new int[] {400, 401, 403, 404, 409, 501}) {
      assertFalse(policy.shouldRetry(op, status, null), "HTTP " + status);
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Operation.class)
  void failureDecisionDependsOnTheOperationOnly(Operation op) {
    assertEquals(op.isRead(), policy.shouldRetry(op, new SocketTimeoutException("read")));
    assertEquals(op.isRead(), policy.shouldRetry(op, new IOException("unexpected end of stream")));
    assertTrue(policy.shouldRetry(op, new ConnectException("refused")));
    assertFalse(policy.shouldRetry(op, new UnknownHostException("x.invalid")));
    assertFalse(policy.shouldRetry(op, new SSLHandshakeException("bad cert")));
    assertFalse(policy.shouldRetry(op, new java.io.InterruptedIOException("call timeout")));
  }

  @Test
  void backoffDoublesPerAttemptWithinJitterBoundsAndStopsAtTheCap() {
    long[][] bounds = {{50, 100}, {100, 200}, {200, 400}, {400, 800}, {500, 1000}, {500, 1000}};
    for (int round = 0; round < 200; round++) {
      for (int attempt = 1; attempt <= bounds.length; attempt++) {
        long ms = policy.backoff(attempt, null).toMillis();
        long[] b = bounds[attempt - 1];
        assertTrue(ms >= b[0] && ms <= b[1], "attempt " + attempt + ": " + ms + " ms");
      }
    }
  }

  @Test
  void backoffIsJittered() {
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 50; i++) {
      seen.add(policy.backoff(3, null).toMillis());
    }
    assertTrue(seen.size() > 5, "50 waits took only " + seen + " values");
  }

  @Test
  void backoffNeverOverflowsForManyAttemptsOrLargeSettings() {
    RetryPolicy big = new RetryPolicy(100, Duration.ofMillis(Long.MAX_VALUE / 4),
        Duration.ofDays(1), Clock.systemUTC());
    for (int attempt : new int[] {1, 2, 30, 64, 100}) {
      Duration d = big.backoff(attempt, null);
      assertFalse(d.isNegative(), "attempt " + attempt + ": " + d);
      assertTrue(d.compareTo(Duration.ofDays(1)) <= 0, "attempt " + attempt + ": " + d);
    }
    for (int attempt : new int[] {30, 64, 100}) {
      long ms = policy.backoff(attempt, null).toMillis();
      assertTrue(ms >= 500 && ms <= 1000, "attempt " + attempt + ": " + ms);
    }
  }

  @Test
  void retryAfterWinsOverBackoff() {
    assertEquals(Duration.ofSeconds(3), policy.backoff(1, "3"));
    assertEquals(Duration.ofSeconds(9), policy.backoff(1, "Sat, 01 Mar 2025 12:00:09 GMT"));
    assertEquals(Duration.ZERO, policy.backoff(1, "Sat, 01 Mar 2025 11:00:00 GMT"),
        "a date in the past means: now");
    assertEquals(Duration.ZERO, policy.backoff(1, "-5"));
    assertEquals(Duration.ofMinutes(2), policy.backoff(1, "100000"));
  }

  @Test
  void unreadableRetryAfterFallsBackToBackoff() {
    long ms = policy.backoff(1, "soon").toMillis();
    assertTrue(ms >= 50 && ms <= 100, ms + " ms");
  }
}
