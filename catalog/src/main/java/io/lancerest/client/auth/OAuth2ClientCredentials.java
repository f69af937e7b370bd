package io.lancerest.client.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lancerest.client.internal.Interceptors;
import io.lancerest.client.internal.RetryPolicy;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.FormBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OAuth2 client-credentials flow. The token is fetched on first use and refreshed on a background
 * thread before it expires (at expiry minus min(10% of its lifetime, 5 minutes)). A failed
 * refresh is re-armed with backoff instead of giving up, so a transient outage of the token
 * endpoint does not break a long job. A 401 from the server forces one synchronous refresh.
 */
public final class OAuth2ClientCredentials implements AuthManager {
  private static final Logger LOG = LoggerFactory.getLogger(OAuth2ClientCredentials.class);
  private static final Duration MAX_MARGIN = Duration.ofMinutes(5);
  private static final Duration RETRY_AFTER_FAILURE_MIN = Duration.ofSeconds(1);
  private static final Duration RETRY_AFTER_FAILURE_MAX = Duration.ofMinutes(1);

  private final OkHttpClient http;
  private final URI tokenUri;
  private final String clientId;
  private final Secret clientSecret;
  private final String scope;
  private final Map<String, String> extraHeaders;
  private final Clock clock;
  private final ObjectMapper mapper = new ObjectMapper();
  private final ScheduledExecutorService scheduler;
  private final RetryPolicy retry;
  private final Interceptors.Sleeper sleeper;

  private volatile Secret accessToken;
  private volatile Instant expiresAt;
  private ScheduledFuture<?> pending;
  private int consecutiveFailures;

  public OAuth2ClientCredentials(
      OkHttpClient http,
      URI tokenUri,
      String clientId,
      Secret clientSecret,
      String scope,
      Map<String, String> extraHeaders,
      Clock clock) {
    this(http, tokenUri, clientId, clientSecret, scope, extraHeaders, clock, null, null);
  }

  /**
   * As above; a synchronous fetch (the first one, or after a 401) that fails with an I/O error,
   * 429 or a 5xx is tried again per {@code retry} (attempts and backoff), waiting with
   * {@code sleeper}. A null {@code retry} means one attempt.
   */
  public OAuth2ClientCredentials(
      OkHttpClient http,
      URI tokenUri,
      String clientId,
      Secret clientSecret,
      String scope,
      Map<String, String> extraHeaders,
      Clock clock,
      RetryPolicy retry,
      Interceptors.Sleeper sleeper) {
    this.retry = retry;
    this.sleeper = sleeper == null ? Interceptors.Sleeper.REAL : sleeper;
    this.http = http;
    this.tokenUri = tokenUri;
    this.clientId = clientId;
    this.clientSecret = clientSecret;
    this.scope = scope;
    this.extraHeaders = extraHeaders == null ? Map.of() : Map.copyOf(extraHeaders);
    this.clock = clock;
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      // Started by the first request, maybe in a Spark session's thread: without the caller's
      // thread locals, so that the refresher does not keep that session for its lifetime.
      Thread t = new Thread(null, r, "lance-rest-oauth2-refresh", 0, false);
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public Map<String, String> headers() {
    Secret t = accessToken;
    if (t == null || isExpired()) {
      t = freshToken(t);
    }
    Map<String, String> h = new LinkedHashMap<>(extraHeaders);
    h.put("Authorization", "Bearer " + t.reveal());
    return h;
  }

  private boolean isExpired() {
    Instant e = expiresAt;
    return e != null && !clock.instant().isBefore(e);
  }

  /** A valid token: the one another thread fetched while this one waited, or a new one. */
  private synchronized Secret freshToken(Secret seen) {
    Secret current = accessToken;
    if (current != null && current != seen && !isExpired()) {
      return current;
    }
    return refreshNow();
  }

  @Override
  public boolean refreshAfterUnauthorized(String rejectedAuthorization) {
    try {
      synchronized (this) {
        Secret current = accessToken;
        boolean alreadyReplaced = current != null && !isExpired()
            && !("Bearer " + current.reveal()).equals(rejectedAuthorization);
        if (!alreadyReplaced) {
          refreshNow();
        }
      }
      return true;
    } catch (RuntimeException e) {
      LOG.warn("OAuth2 token refresh after a 401 failed: {}", e.getMessage());
      return false;
    }
  }

  /** Fetches a new token now; throws when the token endpoint refuses or cannot be reached. */
  public synchronized Secret refreshNow() {
    return refresh(true);
  }

  /**
   * {@code withRetries}: a caller waits for this token, so transient failures are retried here;
   * the background refresh re-arms itself instead.
   */
  private synchronized Secret refresh(boolean withRetries) {
    TokenAnswer answer = withRetries ? fetchWithRetries() : fetch();
    this.accessToken = answer.token;
    this.consecutiveFailures = 0;
    if (answer.expiresIn != null) {
      Instant now = clock.instant();
      this.expiresAt = now.plus(answer.expiresIn);
      long tenth = answer.expiresIn.toMillis() / 10;
      Duration margin = Duration.ofMillis(Math.min(tenth, MAX_MARGIN.toMillis()));
      schedule(answer.expiresIn.minus(margin));
    } else {
      this.expiresAt = null;
    }
    return answer.token;
  }

  private synchronized void schedule(Duration delay) {
    if (pending != null) {
      pending.cancel(false);
    }
    if (scheduler.isShutdown()) {
      return;
    }
    pending = scheduler.schedule(this::backgroundRefresh,
        Math.max(0, delay.toMillis()), TimeUnit.MILLISECONDS);
  }

  private void backgroundRefresh() {
    try {
      refresh(false);
      LOG.debug("OAuth2 token refreshed in the background");
    } catch (RuntimeException e) {
      int failures;
      synchronized (this) {
        failures = ++consecutiveFailures;
      }
      long backoff = Math.min(RETRY_AFTER_FAILURE_MAX.toMillis(),
          RETRY_AFTER_FAILURE_MIN.toMillis() << Math.min(failures - 1, 16));
      LOG.warn("OAuth2 background token refresh failed ({} in a row), trying again in {} ms: {}",
          failures, backoff, e.getMessage());
      schedule(Duration.ofMillis(backoff));
    }
  }

  private record TokenAnswer(Secret token, Duration expiresIn) {}

  private TokenAnswer fetchWithRetries() {
    int attempt = 1;
    while (true) {
      try {
        return fetch();
      } catch (TransientTokenFailure e) {
        if (retry == null || attempt >= retry.maxAttempts()) {
          throw e;
        }
        Duration wait = retry.backoff(attempt, e.retryAfter);
        LOG.debug("OAuth2 token fetch attempt {} failed ({}), retrying in {} ms", attempt,
            e.getMessage(), wait.toMillis());
        try {
          sleeper.sleep(wait);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        attempt++;
      }
    }
  }

  private TokenAnswer fetch() {
    FormBody.Builder form = new FormBody.Builder()
        .add("grant_type", "client_credentials")
        .add("client_id", clientId)
        .add("client_secret", clientSecret.reveal());
    if (scope != null) {
      form.add("scope", scope);
    }
    Request req = new Request.Builder().url(tokenUri.toString()).post(form.build()).build();
    try (Response resp = http.newCall(req).execute()) {
      ResponseBody body = resp.body();
      String text = body == null ? "" : body.string();
      if (resp.code() == 429 || resp.code() >= 500) {
        throw new TransientTokenFailure("OAuth2 token endpoint " + tokenUri + " answered HTTP "
            + resp.code() + " for client '" + clientId + "'", resp.header("Retry-After"));
      }
      if (!resp.isSuccessful()) {
        throw new OAuth2Exception("OAuth2 token endpoint " + tokenUri + " answered HTTP "
            + resp.code() + " for client '" + clientId + "'; check the client id, secret and scope");
      }
      JsonNode json;
      try {
        json = mapper.readTree(text);
      } catch (IOException e) {
        throw new OAuth2Exception("OAuth2 token endpoint " + tokenUri
            + " answered a body that is not JSON; is 'oauth2.token-uri' right?");
      }
      JsonNode tok = json.get("access_token");
      if (tok == null || !tok.isTextual() || tok.asText().isEmpty()) {
        throw new OAuth2Exception(
            "OAuth2 token endpoint " + tokenUri + " answered without an access_token");
      }
      JsonNode exp = json.get("expires_in");
      Duration expiresIn = exp != null && exp.canConvertToLong() && exp.asLong() > 0
          ? Duration.ofSeconds(exp.asLong()) : null;
      return new TokenAnswer(Secret.of(tok.asText()), expiresIn);
    } catch (IOException e) {
      String why = "OAuth2 token endpoint " + tokenUri + " could not be reached: "
          + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
      // Repeating cannot fix a TLS or name-resolution failure.
      if (e instanceof javax.net.ssl.SSLException || e instanceof java.net.UnknownHostException) {
        throw new OAuth2Exception(why);
      }
      throw new TransientTokenFailure(why, null);
    }
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
  }

  @Override
  public String toString() {
    return "OAuth2ClientCredentials{tokenUri=" + tokenUri + ", clientId=" + clientId
        + ", clientSecret=****}";
  }

  /** The token endpoint refused, or could not be reached. */
  public static class OAuth2Exception extends RuntimeException {
    public OAuth2Exception(String message) {
      super(message);
    }
  }

  /** A failure that may pass: I/O error, 429 or 5xx. */
  private static final class TransientTokenFailure extends OAuth2Exception {
    private final String retryAfter;

    TransientTokenFailure(String message, String retryAfter) {
      super(message);
      this.retryAfter = retryAfter;
    }
  }
}
