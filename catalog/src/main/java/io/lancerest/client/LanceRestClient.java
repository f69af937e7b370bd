package io.lancerest.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateNamespaceResponse;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.client.model.DescribeNamespaceResponse;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.DropNamespaceRequest;
import io.lancerest.client.model.DropNamespaceResponse;
import io.lancerest.client.model.Identity;
import io.lancerest.client.model.LanceRequest;
import io.lancerest.client.model.ListNamespacesRequest;
import io.lancerest.client.model.ListNamespacesResponse;
import io.lancerest.client.model.ListTablesRequest;
import io.lancerest.client.model.ListTablesResponse;
import io.lancerest.client.model.NamespaceExistsRequest;
import java.io.Closeable;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A typed client for the Lance REST Namespace spec: one method per operation. It is the only
 * component of this project that speaks HTTP to the namespace server.
 *
 * <p>Thread-safe; share one instance per catalog. Close it to release the connection pool and
 * the OAuth2 refresh thread.
 */
public final class LanceRestClient implements Closeable {
  private static final String CONTEXT_HEADER = "header.";
  private static final String CONTEXT_HEADERS = "headers.";

  private final HttpTransport transport;
  private final ObjectMapper json = LanceJson.mapper();

  public LanceRestClient(HttpTransport transport) {
    this.transport = transport;
  }

  /** A client from flat options ({@code uri}, {@code delimiter}, {@code header.*}, …). */
  public static LanceRestClient create(Map<String, String> options) {
    return new LanceRestClient(new HttpTransport(RestClientConfig.fromProperties(options)));
  }

  public RestClientConfig config() {
    return transport.config();
  }

  public String delimiter() {
    return transport.config().delimiter();
  }

  // ---------------------------------------------------------------- namespace

  public CreateNamespaceResponse createNamespace(CreateNamespaceRequest request) {
    return callJson(Operation.CREATE_NAMESPACE, request, Map.of(), CreateNamespaceResponse.class);
  }

  /** One page of child namespaces. */
  public ListNamespacesResponse listNamespaces(ListNamespacesRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("page_token", request.pageToken());
    q.put("limit", request.limit());
    return callNoBody(Operation.LIST_NAMESPACES, request, q, ListNamespacesResponse.class);
  }

  /** Every child namespace of {@code parent}, following every page. */
  public Stream<String> listAllNamespaces(List<String> parent) {
    return Pages.stream(
        token -> listNamespaces(new ListNamespacesRequest(parent, token, null)),
        ListNamespacesResponse::namespaces, ListNamespacesResponse::pageToken);
  }

  public DescribeNamespaceResponse describeNamespace(DescribeNamespaceRequest request) {
    return callJson(
        Operation.DESCRIBE_NAMESPACE, request, Map.of(), DescribeNamespaceResponse.class);
  }

  public DropNamespaceResponse dropNamespace(DropNamespaceRequest request) {
    return callJson(Operation.DROP_NAMESPACE, request, Map.of(), DropNamespaceResponse.class);
  }

  /** NamespaceExists: returns normally when it exists, throws NamespaceNotFoundException if not. */
  public void namespaceExists(NamespaceExistsRequest request) {
    call(Operation.NAMESPACE_EXISTS, request, Map.of(), jsonBody(request));
  }

  /** True when the namespace exists; false only for a genuine not-found, other errors propagate. */
  public boolean namespaceExists(List<String> id) {
    try {
      namespaceExists(new NamespaceExistsRequest(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** One page of the tables in a namespace. */
  public ListTablesResponse listTables(ListTablesRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("page_token", request.pageToken());
    q.put("limit", request.limit());
    q.put("include_declared", request.includeDeclared());
    return callNoBody(Operation.LIST_TABLES, request, q, ListTablesResponse.class);
  }

  /** Every table of a namespace, following every page. */
  public Stream<String> listAllTables(List<String> namespace) {
    return Pages.stream(
        token -> listTables(new ListTablesRequest(namespace, token, null)),
        ListTablesResponse::tables, ListTablesResponse::pageToken);
  }

  // ---------------------------------------------------------------- table metadata

  public DescribeTableResponse describeTable(DescribeTableRequest request) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("with_table_uri", request.withTableUri());
    q.put("load_detailed_metadata", request.loadDetailedMetadata());
    q.put("check_declared", request.checkDeclared());
    return callJson(Operation.DESCRIBE_TABLE, request, q, DescribeTableResponse.class);
  }

  // ---------------------------------------------------------------- plumbing

  /** Sends a JSON-bodied request and reads a JSON response of type {@code type}. */
  <T> T callJson(Operation op, LanceRequest request, Map<String, Object> query, Class<T> type) {
    RestResponse r = call(op, request, query, jsonBody(request));
    return read(op, request.id(), r, type);
  }

  /** Sends a request without a body (GET lists, and POST routes whose spec has no body). */
  <T> T callNoBody(Operation op, LanceRequest request, Map<String, Object> query, Class<T> type) {
    RestResponse r = call(op, request, query, null);
    return read(op, request.id(), r, type);
  }

  RestResponse call(
      Operation op, LanceRequest request, Map<String, Object> query, RestRequest.Body body) {
    return call(op, request, query, Map.of(), body);
  }

  RestResponse call(Operation op, LanceRequest request, Map<String, Object> query,
      Map<String, String> pathParams, RestRequest.Body body) {
    RestRequest.Builder b = RestRequest.builder(op)
        .id(op.pathTemplate().contains("{id}") ? safeId(request.id()) : null)
        .headers(headersOf(request.identity(), request.context()));
    query.forEach(b::query);
    pathParams.forEach(b::pathParam);
    if (body != null) {
      b.body(body.bytes(), body.mediaType());
    }
    return transport.execute(b.build());
  }

  private static List<String> safeId(List<String> id) {
    return id == null ? List.of() : id;
  }

  RestRequest.Body jsonBody(Object request) {
    try {
      // Records without fields, or with all fields null, serialise as {} as the spec asks.
      return new RestRequest.Body(json.writeValueAsBytes(request), RestRequest.Body.JSON);
    } catch (IOException e) {
      throw new IllegalArgumentException("Request could not be written as JSON: " + e, e);
    }
  }

  /** Per-call identity and context → HTTP headers. */
  static Map<String, String> headersOf(Identity identity, Map<String, String> context) {
    Map<String, String> h = new LinkedHashMap<>();
    if (context != null) {
      context.forEach((k, v) -> {
        if (k.startsWith(CONTEXT_HEADER) && k.length() > CONTEXT_HEADER.length()) {
          h.put(k.substring(CONTEXT_HEADER.length()), v);
        } else if (k.startsWith(CONTEXT_HEADERS) && k.length() > CONTEXT_HEADERS.length()) {
          h.put(k.substring(CONTEXT_HEADERS.length()), v);
        }
      });
    }
    if (identity != null) {
      if (identity.apiKey() != null) {
        h.put("x-api-key", identity.apiKey().reveal());
      }
      if (identity.authToken() != null) {
        h.put("Authorization", "Bearer " + identity.authToken().reveal());
      }
    }
    return h;
  }

  /** Reads a JSON response, with the response headers as {@code context} entries. */
  <T> T read(Operation op, List<String> id, RestResponse r, Class<T> type) {
    try {
      JsonNode node = r.body().length == 0 ? json.createObjectNode() : json.readTree(r.body());
      if (node == null || node.isMissingNode() || node.isNull()) {
        node = json.createObjectNode();
      }
      if (!node.isObject()) {
        throw new IOException("expected a JSON object, got " + node.getNodeType());
      }
      ObjectNode ctx = json.createObjectNode();
      r.headers().forEach((k, v) -> ctx.put(CONTEXT_HEADER + k, String.join(",", v)));
      ((ObjectNode) node).set("context", ctx);
      return json.treeToValue(node, type);
    } catch (IOException | IllegalArgumentException e) {
      throw invalidResponse(op, id, r, e);
    }
  }

  static LanceRestException invalidResponse(
      Operation op, List<String> id, RestResponse r, Exception e) {
    String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int nl = why.indexOf('\n');
    if (nl > 0) {
      why = why.substring(0, nl);
    }
    return new InvalidResponseException(new ErrorDetails(
        "the server answered HTTP " + r.status() + " with a body that is not a valid "
            + op.specName() + " response (" + why + ")",
        "Check that 'uri' points at a Lance REST namespace server",
        null, r.status(), op, id == null ? null : Identifiers.display(id), null,
        r.header("x-request-id")), e);
  }

  @Override
  public void close() {
    transport.close();
  }
}
