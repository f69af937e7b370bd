package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.DeclareTableRequest;
import io.lancerest.client.testing.RestServerFixture;
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
}
