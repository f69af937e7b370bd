package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.DeclareTableRequest;
import io.lancerest.client.testing.RestServerFixture;
import java.lang.ref.WeakReference;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The credential relay's boundary, without Spark: DescribeTable of a table answers only with that
 * table's grant; another table's grant, none, and any other operation are refused with a message
 * that names what is wrong and holds no grant.
 */
class CredentialRelayTest {
  static RestServerFixture server;
  static LanceRestClient client;
  static CredentialRelay relay;
  static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
      .build();

  @BeforeAll
  static void start() {
    server = RestServerFixture.start();
    client = LanceRestClient.create(server.clientOptions(Map.of()));
    client.createNamespace(new CreateNamespaceRequest().id(List.of("relay")));
    client.declareTable(new DeclareTableRequest().id(List.of("relay", "a")));
    client.declareTable(new DeclareTableRequest().id(List.of("relay", "b")));
    relay = CredentialRelay.start(client, "lance", "127.0.0.1", "127.0.0.1", 0);
  }

  @AfterAll
  static void stop() {
    if (relay != null) {
      relay.close();
    }
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static HttpResponse<String> post(String path, String grant) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(relay.uri() + path))
        .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("{}"));
    if (grant != null) {
      b.header(CredentialRelay.GRANT_HEADER, grant);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aTablesGrantDescribesThatTableOnly() throws Exception {
    Map<String, String> a = relay.executorProperties(List.of("relay", "a"));
    Map<String, String> b = relay.executorProperties(List.of("relay", "b"));
    assertEquals(relay.uri(), a.get("uri"));
    assertEquals("$", a.get("delimiter"));
    String grantA = a.get("header." + CredentialRelay.GRANT_HEADER);
    assertNotEquals(grantA, b.get("header." + CredentialRelay.GRANT_HEADER));

    HttpResponse<String> ok = post("/v1/table/relay%24a/describe?delimiter=%24", grantA);
    assertEquals(200, ok.statusCode(), ok.body());
    assertTrue(ok.body().contains("\"location\":") && ok.body().contains("relay$a"), ok.body());
    assertTrue(ok.body().contains("\"storage_options\":"), ok.body());

    HttpResponse<String> other = post("/v1/table/relay%24b/describe", grantA);
    assertEquals(403, other.statusCode());
    assertEquals("{\"error\":\"No valid grant for table relay.b on the credential relay of "
        + "catalog lance\",\"code\":403}", other.body());
    assertEquals(403, post("/v1/table/relay%24a/describe", null).statusCode());
    assertTrue(relay.served() >= 1 && relay.refused() >= 2, relay.served() + " served, "
        + relay.refused() + " refused");
  }

  @Test
  void everyOtherOperationIsRefusedByName() throws Exception {
    String grant = relay.executorProperties(List.of("relay", "a"))
        .get("header." + CredentialRelay.GRANT_HEADER);
    HttpResponse<String> drop = post("/v1/table/relay%24a/drop", grant);
    assertEquals(404, drop.statusCode());
    assertEquals("{\"error\":\"The credential relay of catalog lance answers only DescribeTable "
        + "(POST /v1/table/{id}/describe), not POST /v1/table/relay%24a/drop\",\"code\":404}",
        drop.body());
    assertTrue(!drop.body().contains(grant), "no grant in the answer");
  }

  /**
   * A relay starts in whichever Spark session first needs it, and outlives that session: none
   * of its threads (the JDK server's own among them) may keep that thread's inheritable locals,
   * where Spark keeps the session.
   */
  @Test
  void theRelayKeepsNothingOfTheThreadThatStartedIt() throws Exception {
    InheritableThreadLocal<Object> session = new InheritableThreadLocal<>();
    CredentialRelay[] started = new CredentialRelay[1];
    WeakReference<Object> theSession = startWithSession(session, started);
    try {
      String grant = started[0].executorProperties(List.of("relay", "a"))
          .get("header." + CredentialRelay.GRANT_HEADER);
      HttpRequest describe = HttpRequest.newBuilder(URI.create(started[0].uri()
          + "/v1/table/relay%24a/describe")).timeout(Duration.ofSeconds(10))
          .header(CredentialRelay.GRANT_HEADER, grant)
          .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
      assertEquals(200, HTTP.send(describe, HttpResponse.BodyHandlers.ofString()).statusCode());
      long end = System.nanoTime() + 20_000_000_000L;
      while (theSession.get() != null) {
        if (System.nanoTime() > end) {
          fail("Waited 20 s, collecting garbage every 100 ms, for the session of the thread that "
              + "started the relay to be collected while the relay runs; a thread of the relay "
              + "still holds it. Threads: " + threadNames());
        }
        System.gc();
        Thread.sleep(100);
      }
    } finally {
      started[0].close();
      session.remove();
    }
  }

  /** Starts a relay from a thread whose inheritable {@code local} holds a session: that, weakly. */
  private static WeakReference<Object> startWithSession(InheritableThreadLocal<Object> local,
      CredentialRelay[] started) throws Exception {
    Object session = new Object();
    WeakReference<Object> weak = new WeakReference<>(session);
    Thread starter = new Thread(() -> {
      local.set(session);
      started[0] = CredentialRelay.start(client, "pinning", "127.0.0.1", "127.0.0.1", 0);
    }, "a Spark session's thread");
    starter.start();
    starter.join(30_000);
    assertTrue(started[0] != null, "the relay started");
    return weak;
  }

  private static List<String> threadNames() {
    return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).sorted().toList();
  }
}
