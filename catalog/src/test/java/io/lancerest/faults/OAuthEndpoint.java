package io.lancerest.faults;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The OAuth2 client-credentials token endpoint a {@link FaultProxy} serves, and the check of
 * bearer tokens on every other request. Tokens expire after a fixed, short lifetime, so a long
 * sequence of calls can only finish if the client refreshes them.
 */
public final class OAuthEndpoint {
  private static final SecureRandom RANDOM = new SecureRandom();

  record Answer(int status, byte[] body) {}

  private final String clientId;
  private final String clientSecret;
  private final Duration lifetime;
  private final Map<String, Long> expiryNanos = new ConcurrentHashMap<>();
  private final AtomicInteger issued = new AtomicInteger();
  private final AtomicInteger refused = new AtomicInteger();
  private final AtomicInteger refusedExpired = new AtomicInteger();

  OAuthEndpoint(String clientId, String clientSecret, Duration lifetime) {
    this.clientId = clientId;
    this.clientSecret = clientSecret;
    this.lifetime = lifetime;
  }

  /** Also accept {@code token} as a bearer token that never expires (a static token). */
  public void alsoAccept(String token) {
    expiryNanos.put(token, Long.MAX_VALUE);
  }

  /** Tokens handed out so far. */
  public int issued() {
    return issued.get();
  }

  /** Requests answered 401 (no token, unknown token or expired token). */
  public int refused() {
    return refused.get();
  }

  /** Of {@link #refused()}, those whose token had been issued and had expired. */
  public int refusedExpired() {
    return refusedExpired.get();
  }

  Answer token(FaultProxy.Exchange ex) {
    Map<String, String> form = new HashMap<>();
    for (String pair : new String(ex.body(), StandardCharsets.UTF_8).split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        form.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    if (!"client_credentials".equals(form.get("grant_type"))
        || !clientId.equals(form.get("client_id"))
        || !clientSecret.equals(form.get("client_secret"))) {
      return new Answer(401, "{\"error\":\"invalid_client\"}".getBytes(StandardCharsets.UTF_8));
    }
    byte[] raw = new byte[16];
    RANDOM.nextBytes(raw);
    String token = "tok-" + HexFormat.of().formatHex(raw);
    expiryNanos.put(token, System.nanoTime() + lifetime.toNanos());
    issued.incrementAndGet();
    String body = "{\"access_token\":\"" + token + "\",\"token_type\":\"bearer\",\"expires_in\":"
        + Math.max(1, lifetime.toSeconds()) + "}";
    return new Answer(200, body.getBytes(StandardCharsets.UTF_8));
  }

  boolean accepts(String authorization) {
    if (authorization != null && authorization.startsWith("Bearer ")) {
      Long expiry = expiryNanos.get(authorization.substring("Bearer ".length()).trim());
      if (expiry != null) {
        if (expiry == Long.MAX_VALUE || System.nanoTime() < expiry) {
          return true;
        }
        refusedExpired.incrementAndGet();
      }
    }
    refused.incrementAndGet();
    return false;
  }
}
