package io.lancerest.client.scripted;

import io.lancerest.client.HttpTransport;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.RestClientConfig;
import io.lancerest.client.internal.Interceptors;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.QueueDispatcher;
import okhttp3.mockwebserver.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * One MockWebServer per test class, answering from a script of responses. Each test gets a fresh
 * script, a fresh client (so no pooled connection outlives a test that broke it) and a sleeper
 * that records the waits between attempts instead of sleeping.
 *
 * <p>The script fails fast: a request nobody scripted gets a 404, so a retry that should not
 * happen shows up as a wrong exception instead of a hang.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ScriptedServerTest {
  /** The fixed "now" of the clock given to the transport; Retry-After dates are relative to it. */
  static final Instant NOW = Instant.parse("2025-03-01T12:00:00Z");

  protected MockWebServer server;
  /** Waits the retry interceptor asked for, in order. */
  protected final List<Duration> waits = new CopyOnWriteArrayList<>();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private int requestsBefore;

  @BeforeAll
  void startServer() throws IOException {
    server = new MockWebServer();
    server.start();
  }

  @AfterAll
  void stopServer() throws IOException {
    server.shutdown();
  }

  @BeforeEach
  void freshScript() throws InterruptedException {
    QueueDispatcher dispatcher = new QueueDispatcher();
    dispatcher.setFailFast(true);
    server.setDispatcher(dispatcher);
    while (server.takeRequest(0, TimeUnit.MILLISECONDS) != null) {
      // drop what earlier tests left
    }
    requestsBefore = server.getRequestCount();
    waits.clear();
  }

  @AfterEach
  void closeClients() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    toClose.clear();
  }

  /** The server's base URL, without a trailing slash. */
  protected String uri() {
    String u = server.url("/").toString();
    return u.substring(0, u.length() - 1);
  }

  /** Options pointing at the scripted server, plus {@code extra} (key, value, key, value...). */
  protected Map<String, String> options(String... extra) {
    Map<String, String> o = new LinkedHashMap<>();
    o.put("uri", uri());
    // A scripted request that is never answered must not stall the suite for a minute.
    o.put("read-timeout-ms", "5000");
    for (int i = 0; i < extra.length; i += 2) {
      o.put(extra[i], extra[i + 1]);
    }
    return o;
  }

  protected Clock clock() {
    return Clock.fixed(NOW, ZoneOffset.UTC);
  }

  protected HttpTransport transport(Map<String, String> options) {
    Interceptors.Sleeper recording = waits::add;
    HttpTransport t =
        new HttpTransport(RestClientConfig.fromProperties(options), recording, clock());
    toClose.add(t);
    return t;
  }

  protected HttpTransport transport(String... extra) {
    return transport(options(extra));
  }

  protected LanceRestClient client(String... extra) {
    return new LanceRestClient(transport(extra));
  }

  protected void enqueue(MockResponse... responses) {
    for (MockResponse r : responses) {
      server.enqueue(r);
    }
  }

  protected static MockResponse json(int status, String body) {
    return new MockResponse().setResponseCode(status)
        .setHeader("Content-Type", "application/json").setBody(body);
  }

  protected static MockResponse ok(String body) {
    return json(200, body);
  }

  /** Requests the server received during this test. */
  protected int requestCount() {
    return server.getRequestCount() - requestsBefore;
  }

  /** The next request the server recorded in this test; fails if none arrives in 5 s. */
  protected RecordedRequest next() throws InterruptedException {
    RecordedRequest r = server.takeRequest(5, TimeUnit.SECONDS);
    if (r == null) {
      throw new AssertionError("the server received no (further) request");
    }
    return r;
  }
}
