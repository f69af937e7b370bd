package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.HttpTransport;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.spec.Operation;
import io.lancerest.client.RestRequest;
import io.lancerest.client.Version;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.client.model.DescribeNamespaceResponse;
import io.lancerest.client.model.Identity;
import io.lancerest.client.model.ListNamespacesRequest;
import java.util.List;
import java.util.Map;
import okhttp3.mockwebserver.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What goes on the wire besides the body: headers, identity, context, query and path. */
class HeadersAndContextTest extends ScriptedServerTest {
  private static final String PROPS = "{\"properties\":{\"k\":\"v\"}}";

  private RecordedRequest describeWith(LanceRestClient c, Identity identity,
      Map<String, String> context) throws InterruptedException {
    enqueue(ok(PROPS));
    c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns")).identity(identity)
        .context(context));
    return next();
  }

  @Test
  void staticHeaderOptionsAreSentOnEveryRequest() throws InterruptedException {
    LanceRestClient c = client("header.X-Tenant", "acme", "header.x-region", "eu-1");

    RecordedRequest r = describeWith(c, null, null);
    RecordedRequest r2 = describeWith(c, null, null);

    for (RecordedRequest req : List.of(r, r2)) {
      assertEquals("acme", req.getHeader("X-Tenant"));
      assertEquals("eu-1", req.getHeader("x-region"));
    }
  }

  @Test
  void contextHeaderEntriesBecomeHeadersAndWinOverStaticOnes() throws InterruptedException {
    RecordedRequest r = describeWith(client("header.X-Tenant", "acme"), null,
        Map.of("header.X-Trace-Id", "t-1", "headers.X-Other", "o-2", "header.X-Tenant", "beta",
            "unrelated", "ignored"));

    assertEquals("t-1", r.getHeader("X-Trace-Id"));
    assertEquals("o-2", r.getHeader("X-Other"));
    assertEquals("beta", r.getHeader("X-Tenant"));
    assertNull(r.getHeader("unrelated"));
    assertEquals("{\"id\":[\"ns\"]}", r.getBody().readUtf8(), "context never goes in the body");
  }

  @Test
  void responseHeadersComeBackInTheResponseContext() {
    enqueue(ok(PROPS).setHeader("X-Request-Id", "rid-5").setHeader("X-Lance-Version", "7"));

    DescribeNamespaceResponse r =
        client().describeNamespace(new DescribeNamespaceRequest().id(List.of("ns")));

    assertEquals("rid-5", r.getContext().get("header.x-request-id"));
    assertEquals("7", r.getContext().get("header.x-lance-version"));
    assertEquals(Map.of("k", "v"), r.getProperties());
  }

  @Test
  void identityApiKeyIsSentAsXApiKey() throws InterruptedException {
    RecordedRequest r = describeWith(client(), Identity.apiKey("user-key"), null);
    assertEquals("user-key", r.getHeader("x-api-key"));
    assertNull(r.getHeader("Authorization"));
    assertEquals("{\"id\":[\"ns\"]}", r.getBody().readUtf8(), "identity never goes in the body");
  }

  @Test
  void identityAuthTokenIsSentAsBearerAndWinsOverTheCatalogToken() throws InterruptedException {
    RecordedRequest r = describeWith(client("token", "catalog-token"),
        Identity.bearer("user-token"), null);
    assertEquals("Bearer user-token", r.getHeader("Authorization"));
  }

  @Test
  void tokenAndApiKeyOptionsAreSent() throws InterruptedException {
    RecordedRequest r = describeWith(client("token", "catalog-token", "api_key", "catalog-key"),
        null, null);
    assertEquals("Bearer catalog-token", r.getHeader("Authorization"));
    assertEquals("catalog-key", r.getHeader("x-api-key"));
  }

  @Test
  void userAgentNamesTheProjectAndVersion() throws InterruptedException {
    RecordedRequest r = describeWith(client(), null, null);
    assertTrue(r.getHeader("User-Agent").startsWith("lance-rest-spark/" + Version.VERSION + " "),
        r.getHeader("User-Agent"));
  }

  @Test
  void delimiterIsSentAsQueryParameter() throws InterruptedException {
    enqueue(ok(PROPS), ok(PROPS));
    client().describeNamespace(new DescribeNamespaceRequest().id(List.of("a", "b")));
    client("delimiter", ".").describeNamespace(new DescribeNamespaceRequest()
        .id(List.of("a", "b")));

    RecordedRequest dollar = next();
    assertEquals("/v1/namespace/a%24b/describe?delimiter=%24", dollar.getPath());
    assertEquals("$", dollar.getRequestUrl().queryParameter("delimiter"));
    assertEquals("/v1/namespace/a.b/describe?delimiter=.", next().getPath());
  }

  @Test
  void postWithoutBodySendsAnEmptyJsonObject() throws InterruptedException {
    enqueue(ok("{}"));
    transport().execute(RestRequest.builder(Operation.TABLE_EXISTS).id(List.of("ns", "t")).build());

    RecordedRequest r = next();
    assertEquals("POST", r.getMethod());
    assertEquals("{}", r.getBody().readUtf8());
    assertTrue(r.getHeader("Content-Type").startsWith("application/json"),
        r.getHeader("Content-Type"));
  }

  @Test
  void getListSendsNoBody() throws InterruptedException {
    enqueue(ok("{\"namespaces\":[]}"));
    client().listNamespaces(new ListNamespacesRequest().id(List.of("ns")).limit(10L));

    RecordedRequest r = next();
    assertEquals("GET", r.getMethod());
    assertEquals(0, r.getBodySize());
    assertEquals("10", r.getRequestUrl().queryParameter("limit"));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "$   | a b      | x      | /v1/table/a%20b%24x/describe",
      "$   | é        | ü      | /v1/table/%C3%A9%24%C3%BC/describe",
      ".   | cost$usd | t      | /v1/table/cost%24usd.t/describe",
      "$   | a/b      | c%d    | /v1/table/a%2Fb%24c%25d/describe",
      "::  | ns       | t.v1   | /v1/table/ns%3A%3At.v1/describe"})
  void pathSegmentsArePercentEncoded(String delimiter, String ns, String table, String path)
      throws InterruptedException {
    enqueue(ok("{}"));
    HttpTransport t = transport("delimiter", delimiter);

    t.execute(RestRequest.builder(Operation.DESCRIBE_TABLE).id(List.of(ns, table)).build());

    assertEquals(path, next().getRequestUrl().encodedPath());
  }

  @Test
  void rootNamespaceIsTheDelimiter() throws InterruptedException {
    enqueue(ok("{\"namespaces\":[\"a\"]}"), ok("{\"namespaces\":[\"a\"]}"));

    client().listAllNamespaces(List.of()).toList();
    client("delimiter", "::").listAllNamespaces(List.of()).toList();

    assertEquals("/v1/namespace/%24/list", next().getRequestUrl().encodedPath());
    assertEquals("/v1/namespace/%3A%3A/list", next().getRequestUrl().encodedPath());
  }

  @Test
  void rootWithDotDelimiterIsRejectedInsteadOfHittingAnotherRoute() {
    LanceRestClient c = client("delimiter", ".");

    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> c.listAllNamespaces(List.of()).toList());

    assertEquals("Identifier <root> would be sent as the path segment '.', which URLs cannot "
        + "carry; the root namespace needs a 'delimiter' other than '.' (the default is '$')",
        e.getMessage());
    assertEquals(0, requestCount());
  }

  @Test
  void nameContainingTheDelimiterIsRejectedBeforeSending() {
    LanceRestClient c = client();
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns", "a$b"))));

    assertEquals("Name 'a$b' in identifier ns.`a$b` contains the namespace delimiter '$'; the "
        + "server would read it as nested names. Rename it, or configure another 'delimiter' for "
        + "this catalog", e.getMessage());
    assertEquals(0, requestCount());
  }
}
