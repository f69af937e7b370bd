package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.HttpTransport;
import io.lancerest.client.LanceJson;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.spec.Operation;
import io.lancerest.client.Pages;
import io.lancerest.client.RestRequest;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.model.ListTablesResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import okhttp3.mockwebserver.RecordedRequest;
import org.junit.jupiter.api.Test;

/** Listings follow page_token to the end, lazily, and refuse to loop on a repeated token. */
class PaginationTest extends ScriptedServerTest {

  private static String page(String field, String token, String... items) {
    String list = Stream.of(items).map(i -> "\"" + i + "\"").collect(Collectors.joining(","));
    return "{\"" + field + "\":[" + list + "]"
        + (token == null ? "" : ",\"page_token\":\"" + token + "\"") + "}";
  }

  @Test
  void listAllNamespacesFollowsEveryPageUntilTheTokenIsMissing() throws Exception {
    enqueue(ok(page("namespaces", "t2", "a", "b")), ok(page("namespaces", "t3", "c")),
        ok(page("namespaces", "t4")), ok(page("namespaces", null, "d", "e")));

    List<String> all = client().listAllNamespaces(List.of("top")).toList();

    assertEquals(List.of("a", "b", "c", "d", "e"), all);
    assertEquals(4, requestCount());
    assertNull(next().getRequestUrl().queryParameter("page_token"));
    assertEquals("t2", next().getRequestUrl().queryParameter("page_token"));
    assertEquals("t3", next().getRequestUrl().queryParameter("page_token"));
    RecordedRequest last = next();
    assertEquals("t4", last.getRequestUrl().queryParameter("page_token"));
    assertEquals("/v1/namespace/top/list", last.getRequestUrl().encodedPath());
  }

  @Test
  void emptyOrNullTokenEndsTheListing() {
    enqueue(ok(page("tables", "p2", "t1")), ok(page("tables", "", "t2")));
    assertEquals(List.of("t1", "t2"), client().listAllTables(List.of("ns")).toList());
    assertEquals(2, requestCount());

    enqueue(ok(page("tables", "p2", "t1")), ok("{\"tables\":[\"t2\"],\"page_token\":null}"));
    assertEquals(List.of("t1", "t2"), client().listAllTables(List.of("ns")).toList());
    assertEquals(4, requestCount());
  }

  @Test
  void pagesAreFetchedOnlyWhenTheirItemsAreNeeded() {
    enqueue(ok(page("namespaces", "p2", "a", "b")), ok(page("namespaces", "p3", "c")),
        ok(page("namespaces", null, "d")));
    LanceRestClient c = client();

    Iterator<String> it = c.listAllNamespaces(List.of()).iterator();
    assertEquals(0, requestCount(), "creating the stream sends nothing");
    assertEquals("a", it.next());
    assertEquals("b", it.next());
    assertEquals(1, requestCount(), "the second page is not fetched before it is needed");
    assertEquals("c", it.next());
    assertEquals(2, requestCount());
  }

  @Test
  void aShortCircuitedListingStopsFetching() {
    enqueue(ok(page("namespaces", "p2", "a", "b")), ok(page("namespaces", null, "c")));
    assertEquals(List.of("a"), client().listAllNamespaces(List.of()).limit(1).toList());
    assertEquals(1, requestCount());
  }

  @Test
  void emptyMiddlePageDoesNotEndTheListing() {
    enqueue(ok(page("namespaces", "p2", "a")), ok(page("namespaces", "p3")),
        ok(page("namespaces", null, "b")));
    assertEquals(List.of("a", "b"), client().listAllNamespaces(List.of()).toList());
  }

  @Test
  void repeatedTokenStopsWithAClearError() {
    enqueue(ok(page("namespaces", "same", "a")), ok(page("namespaces", "same", "b")),
        ok(page("namespaces", null, "never")));

    Iterator<String> it = client().listAllNamespaces(List.of("ns")).iterator();
    assertEquals("a", it.next());
    InvalidResponseException e = assertThrows(InvalidResponseException.class, it::next);

    assertTrue(e.getMessage().startsWith("ListNamespaces 'ns': "
        + "the server sent page token 'same' a second time, so the listing would never end"),
        e.getMessage());
    assertEquals(Operation.LIST_NAMESPACES, e.operation());
    assertEquals("ns", e.identifier());
    assertEquals(2, requestCount());
  }

  @Test
  void repeatedTokenOfATableListingNamesListTables() {
    enqueue(ok(page("tables", "t", "a")), ok(page("tables", "t", "b")));

    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> client().listAllTables(List.of("db")).toList());

    assertEquals(Operation.LIST_TABLES, e.operation());
    assertTrue(e.getMessage().startsWith("ListTables 'db': the server sent page token 't'"),
        e.getMessage());
  }

  /** The same pager over the bare transport (ListAllTables, GET /v1/table). */
  @Test
  void listAllTablesOverTheTransportFollowsThreePages() throws Exception {
    enqueue(ok(page("tables", "x1", "ns$a")), ok(page("tables", "x2", "ns$b")),
        ok(page("tables", null, "other$c")));
    HttpTransport t = transport();

    List<String> all = Pages.stream(Operation.LIST_ALL_TABLES, null,
        token -> readPage(t, token), ListTablesResponse::getTables,
            ListTablesResponse::getPageToken)
        .toList();

    assertEquals(List.of("ns$a", "ns$b", "other$c"), all);
    RecordedRequest first = next();
    assertEquals("GET", first.getMethod());
    assertEquals("/v1/table", first.getRequestUrl().encodedPath());
    assertEquals("x1", next().getRequestUrl().queryParameter("page_token"));
    assertEquals("x2", next().getRequestUrl().queryParameter("page_token"));
  }

  @Test
  void repeatedTokenOverTheTransportNamesTheOperation() {
    enqueue(ok(page("tables", "x1", "a")), ok(page("tables", "x1", "b")));
    HttpTransport t = transport();

    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> Pages.all(Operation.LIST_TABLES, List.of("ns"),
            token -> readPage(t, token), ListTablesResponse::getTables,
            ListTablesResponse::getPageToken));

    assertEquals(Operation.LIST_TABLES, e.operation());
    assertTrue(e.getMessage().startsWith("ListTables 'ns': the server sent page token 'x1'"),
        e.getMessage());
  }

  private static ListTablesResponse readPage(HttpTransport t, String token) {
    RestRequest req = RestRequest.builder(Operation.LIST_ALL_TABLES)
        .query("page_token", token).build();
    try {
      return LanceJson.mapper().readValue(t.execute(req).body(), ListTablesResponse.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
