package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.UnauthenticatedException;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.client.model.Identity;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.RecordedRequest;
import okhttp3.mockwebserver.SocketPolicy;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * OAuth2 client credentials against a scripted token endpoint on the same server: the token is
 * fetched, sent as Bearer, refreshed before it expires on a background thread, recovered after
 * a failed refresh, and refreshed exactly once when the API answers 401.
 */
class OAuth2Test extends ScriptedServerTest {
  private final AtomicInteger issued = new AtomicInteger();
  /** Lifetimes (expires_in, seconds) of the next tokens; one hour when empty. */
  private final Queue<Integer> lifetimes = new ConcurrentLinkedQueue<>();
  /** Answers the token endpoint gives instead of a token, in order. */
  private final Queue<MockResponse> tokenFailures = new ConcurrentLinkedQueue<>();
  /** Answers the API gives instead of 200, in order. */
  private final Queue<MockResponse> apiFailures = new ConcurrentLinkedQueue<>();
  private final List<RecordedRequest> tokenRequests = Collections.synchronizedList(new ArrayList<>());
  private final List<Long> tokenRequestNanos = Collections.synchronizedList(new ArrayList<>());
  /** A token the API refuses from now on. */
  private volatile String revoked;
  private final List<RecordedRequest> apiRequests = Collections.synchronizedList(new ArrayList<>());

  @Override
  protected Clock clock() {
    return Clock.systemUTC();
  }

  @BeforeEach
  void tokenServer() {
    issued.set(0);
    revoked = null;
    lifetimes.clear();
    tokenFailures.clear();
    apiFailures.clear();
    tokenRequests.clear();
    tokenRequestNanos.clear();
    apiRequests.clear();
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        if (request.getPath().startsWith("/oauth/token")) {
          tokenRequestNanos.add(System.nanoTime());
          tokenRequests.add(request);
          MockResponse failure = tokenFailures.poll();
          if (failure != null) {
            return failure;
          }
          Integer life = lifetimes.poll();
          return ok("{\"access_token\":\"tok-" + issued.incrementAndGet()
              + "\",\"token_type\":\"bearer\",\"expires_in\":" + (life == null ? 3600 : life)
              + "}");
        }
        apiRequests.add(request);
        if (("Bearer " + revoked).equals(request.getHeader("Authorization"))) {
          return json(401, "{\"error\":\"token revoked\"}");
        }
        MockResponse failure = apiFailures.poll();
        return failure != null ? failure : ok("{\"properties\":{}}");
      }
    });
  }

  private LanceRestClient oauthClient(String... extra) {
    List<String> o = new ArrayList<>(List.of("oauth2.client-id", "spark-job",
        "oauth2.client-secret", "s3cr3t-value"));
    o.addAll(List.of(extra));
    return client(o.toArray(String[]::new));
  }

  private void describe(LanceRestClient c) {
    c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns")));
  }

  private String lastBearer() {
    return apiRequests.get(apiRequests.size() - 1).getHeader("Authorization");
  }

  /**
   * The server has seen the token request, but the client may still be reading the answer:
   * call until the new token shows (the old one is still valid meanwhile).
   */
  private void awaitBearer(LanceRestClient c, String expected) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    do {
      describe(c);
      if (expected.equals(lastBearer())) {
        return;
      }
      Thread.sleep(10);
    } while (System.nanoTime() < deadline);
    assertEquals(expected, lastBearer());
  }

  private void awaitTokenRequests(int n, long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (tokenRequests.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertEquals(n, tokenRequests.size(), "token requests");
  }

  @Test
  void tokenIsFetchedFromTheDefaultEndpointWithFormFieldsAndSentAsBearer() {
    LanceRestClient c = oauthClient("oauth2.scope", "catalog:read catalog:write");

    describe(c);
    describe(c);

    assertEquals(1, tokenRequests.size(), "one token serves both calls");
    RecordedRequest t = tokenRequests.get(0);
    assertEquals("POST", t.getMethod());
    assertEquals("/oauth/token", t.getPath());
    assertTrue(t.getHeader("Content-Type").startsWith("application/x-www-form-urlencoded"));
    HttpUrl form = HttpUrl.get("http://x/?" + t.getBody().readUtf8());
    assertEquals("client_credentials", form.queryParameter("grant_type"));
    assertEquals("spark-job", form.queryParameter("client_id"));
    assertEquals("s3cr3t-value", form.queryParameter("client_secret"));
    assertEquals("catalog:read catalog:write", form.queryParameter("scope"));
    assertEquals("Bearer tok-1", lastBearer());
  }

  @Test
  void credentialOptionAndExplicitTokenUriAreHonoured() {
    LanceRestClient c = client("oauth2.credential", "id2:sec2",
        "oauth2.token-uri", uri() + "/oauth/token?realm=lance");

    describe(c);

    HttpUrl form = HttpUrl.get("http://x/?" + tokenRequests.get(0).getBody().readUtf8());
    assertEquals("id2", form.queryParameter("client_id"));
    assertEquals("sec2", form.queryParameter("client_secret"));
    assertEquals(null, form.queryParameter("scope"));
    assertEquals("/oauth/token?realm=lance", tokenRequests.get(0).getPath());
  }

  @Test
  void tokenIsRefreshedInTheBackgroundBeforeItExpires() throws InterruptedException {
    lifetimes.add(2);
    LanceRestClient c = oauthClient();
    describe(c);
    assertEquals("Bearer tok-1", lastBearer());

    // No call is made while waiting: only the background thread can fetch the second token.
    awaitTokenRequests(2, 4000);

    long afterMs = TimeUnit.NANOSECONDS.toMillis(tokenRequestNanos.get(1) - tokenRequestNanos.get(0));
    assertTrue(afterMs >= 1500 && afterMs < 2000,
        "refresh came " + afterMs + " ms after the first token of 2 s");
    awaitBearer(c, "Bearer tok-2");
    assertEquals(2, tokenRequests.size(), "no call had to fetch a token itself");
  }

  @Test
  void failedBackgroundRefreshIsRetriedAndLaterCallsUseTheNewToken()
      throws InterruptedException {
    lifetimes.add(1);
    LanceRestClient c = oauthClient();
    describe(c);
    tokenFailures.add(json(500, "{\"error\":\"token service down\"}"));

    // 0.9 s: refresh fails; about 1 s later the re-armed refresh succeeds.
    awaitTokenRequests(3, 5000);

    awaitBearer(c, "Bearer tok-2");
    assertEquals(3, tokenRequests.size());
  }

  @Test
  void unauthorizedTriggersExactlyOneRefreshAndRetry() {
    apiFailures.add(json(401, "{\"error\":\"token revoked\",\"code\":16}"));
    LanceRestClient c = oauthClient();

    describe(c);

    assertEquals(2, apiRequests.size());
    assertEquals("Bearer tok-1", apiRequests.get(0).getHeader("Authorization"));
    assertEquals("Bearer tok-2", apiRequests.get(1).getHeader("Authorization"));
    assertEquals(2, tokenRequests.size());
  }

  @Test
  void secondUnauthorizedSurfacesAsUnauthenticated() {
    apiFailures.add(json(401, "{\"error\":\"no\",\"code\":16}"));
    apiFailures.add(json(401, "{\"error\":\"still no\",\"code\":16}"));
    LanceRestClient c = oauthClient();

    UnauthenticatedException e = assertThrows(UnauthenticatedException.class, () -> describe(c));

    assertEquals(2, apiRequests.size(), "one retry after the refresh, no more");
    assertEquals(2, tokenRequests.size());
    assertEquals("DescribeNamespace 'ns': not authenticated (server said: still no). Check the "
        + "catalog's 'token', 'api_key' or 'oauth2.*' options [HTTP 401, code 16]",
        e.getMessage());
  }

  @Test
  void staticTokenIsNotRetriedOnUnauthorized() {
    apiFailures.add(json(401, "{\"error\":\"bad token\"}"));
    LanceRestClient c = client("token", "fixed-token");

    assertThrows(UnauthenticatedException.class, () -> describe(c));

    assertEquals(1, apiRequests.size());
    assertEquals("Bearer fixed-token", apiRequests.get(0).getHeader("Authorization"));
    assertTrue(tokenRequests.isEmpty());
  }

  @Test
  void refusedTokenRequestIsAnUnauthenticatedErrorAndNothingIsSent() {
    tokenFailures.add(json(401, "{\"error\":\"invalid_client\"}"));
    LanceRestClient c = oauthClient();

    UnauthenticatedException e = assertThrows(UnauthenticatedException.class, () -> describe(c));

    assertTrue(apiRequests.isEmpty());
    assertEquals(1, tokenRequests.size(), "a refusal is not retried");
    assertEquals(0, e.httpStatus());
    assertTrue(e.getMessage().startsWith("DescribeNamespace 'ns': could not obtain an access "
        + "token (OAuth2 token endpoint " + uri() + "/oauth/token answered HTTP 401 for client "
        + "'spark-job'"), e.getMessage());
  }

  @Test
  void firstTokenFetchIsRetriedAfterA5xxAndADroppedConnection() {
    tokenFailures.add(json(503, "{\"error\":\"starting\"}"));
    tokenFailures.add(new MockResponse().setSocketPolicy(SocketPolicy.DISCONNECT_AFTER_REQUEST));
    LanceRestClient c = oauthClient("retry.initial-backoff-ms", "40");

    describe(c);

    assertEquals(3, tokenRequests.size(), "token requests");
    assertEquals("Bearer tok-1", lastBearer());
    assertEquals(2, waits.size(), "one wait before each new attempt: " + waits);
    for (java.time.Duration w : waits) {
      assertTrue(w.toMillis() >= 20 && w.toMillis() <= 160, "backoff of the policy: " + waits);
    }
  }

  @Test
  void tokenFetchRetriesAreBoundedByRetryMaxAttempts() {
    for (int i = 0; i < 5; i++) {
      tokenFailures.add(json(500, "{}"));
    }
    LanceRestClient c = oauthClient("retry.max-attempts", "3");

    UnauthenticatedException e = assertThrows(UnauthenticatedException.class, () -> describe(c));

    assertEquals(3, tokenRequests.size(), "token requests");
    assertTrue(apiRequests.isEmpty());
    assertTrue(e.getMessage().contains("answered HTTP 500 for client 'spark-job'"),
        e.getMessage());
  }

  @Test
  void tokenRequestCarriesTheUserAgentButNotTheCatalogHeaders() {
    LanceRestClient c = oauthClient("header.X-Team", "blue");

    describe(c);

    RecordedRequest t = tokenRequests.get(0);
    assertTrue(t.getHeader("User-Agent").startsWith("lance-rest-spark/"),
        t.getHeader("User-Agent"));
    assertEquals(null, t.getHeader("X-Team"));
    assertEquals("blue", apiRequests.get(0).getHeader("X-Team"));
  }

  @Test
  void unreachableTokenEndpointIsAnUnauthenticatedError() {
    LanceRestClient c = oauthClient("oauth2.token-uri", "http://127.0.0.1:1/oauth/token");

    UnauthenticatedException e = assertThrows(UnauthenticatedException.class, () -> describe(c));

    assertTrue(e.getMessage().contains("could not be reached"), e.getMessage());
    assertTrue(apiRequests.isEmpty());
  }

  @Test
  void perCallBearerIdentityIsNotOverwrittenByTheCatalogToken() {
    LanceRestClient c = oauthClient();

    c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns"))
        .identity(Identity.bearer("user-token")).context(Map.of()));

    assertEquals("Bearer user-token", lastBearer());
  }

  @Test
  void concurrentUnauthorizedAnswersShareOneRefresh() throws Exception {
    LanceRestClient c = oauthClient();
    describe(c);
    revoked = "tok-1";
    int n = 6;
    List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Thread t = new Thread(() -> {
        try {
          start.await();
          describe(c);
        } catch (Throwable e) {
          errors.add(e);
        }
      });
      t.start();
      threads.add(t);
    }
    start.countDown();
    for (Thread t : threads) {
      t.join(10_000);
    }

    assertTrue(errors.isEmpty(), errors.toString());
    assertEquals(2, tokenRequests.size(), n + " requests refused together share one refresh");
    // Threads that started after the refresh sent tok-2 at once; the others were refused once.
    assertTrue(apiRequests.size() >= 1 + n + 1 && apiRequests.size() <= 1 + 2 * n,
        apiRequests.size() + " API requests");
    assertEquals("Bearer tok-2", lastBearer());
  }

  @Test
  void refusedPerCallIdentityIsNotRetriedWithARefreshedCatalogToken() {
    LanceRestClient c = oauthClient();
    revoked = "user-token";

    assertThrows(UnauthenticatedException.class, () -> c.describeNamespace(
        new DescribeNamespaceRequest().id(List.of("ns")).identity(Identity.bearer("user-token"))
            .context(Map.of())));

    assertEquals(1, apiRequests.size());
    assertEquals(1, tokenRequests.size());
  }

  @Test
  void apiKeyOptionIsSentAlongsideTheOAuth2Token() {
    LanceRestClient c = oauthClient("api_key", "gateway-key");

    describe(c);

    RecordedRequest r = apiRequests.get(0);
    assertEquals("gateway-key", r.getHeader("x-api-key"));
    assertEquals("Bearer tok-1", r.getHeader("Authorization"));
  }
}
