package io.lancerest.spark.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;

/**
 * A MockWebServer in front of the real REST server. Every request is forwarded and counted by
 * route ({@code table/describe}, {@code namespace/list}, …), which is how the tests count the
 * calls a Spark statement costs without touching the client.
 *
 * <p>With {@code scripted = true} it also plays a more capable server: it implements RenameTable
 * (deregister + register of the same data), keeps table properties (DeclareTable's and
 * UpdateTableSchemaMetadata's, returned by DescribeTable), and pages every list answer into
 * pages of {@code pageSize} names, which the directory server does not do.
 */
public final class ForwardingProxy implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final MediaType JSON_TYPE = MediaType.get("application/json");

  private final MockWebServer server = new MockWebServer();
  private final OkHttpClient http = new OkHttpClient.Builder()
      .readTimeout(60, TimeUnit.SECONDS).retryOnConnectionFailure(false).build();
  private final HttpUrl target;
  private final String rootDirUri;
  private final boolean scripted;
  private final int pageSize;
  private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
  /** When set, DescribeTable answers say the namespace manages table versions. */
  volatile boolean forceManagedVersioning;
  /** Tables (ids as paths name them: {@code ns$t}) whose versions the answers say it manages. */
  private final java.util.Set<String> managedVersioning = ConcurrentHashMap.newKeySet();
  /** Table properties kept by the scripted server, by delimited table id. */
  private final Map<String, Map<String, String>> properties = new ConcurrentHashMap<>();

  public ForwardingProxy(String targetUri, String rootDirUri, boolean scripted, int pageSize) {
    this.target = HttpUrl.get(targetUri);
    this.rootDirUri = rootDirUri.endsWith("/") ? rootDirUri : rootDirUri + "/";
    this.scripted = scripted;
    this.pageSize = pageSize;
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        try {
          return handle(request);
        } catch (IOException e) {
          return new MockResponse().setResponseCode(502).setBody(String.valueOf(e));
        }
      }
    });
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String uri() {
    return "http://127.0.0.1:" + server.getPort();
  }

  /** Requests seen for a route such as {@code table/describe}. */
  public int count(String route) {
    AtomicInteger c = counts.get(route);
    return c == null ? 0 : c.get();
  }

  public Map<String, Integer> counts() {
    Map<String, Integer> out = new TreeMap<>();
    counts.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  public void resetCounts() {
    counts.clear();
  }

  /**
   * From now on, DescribeTable answers for table {@code id} (as the path names it: {@code ns$t})
   * say ({@code managed}) or do not say that the namespace manages its versions
   * ({@code managed_versioning}), as a server of that kind would; the directory server's own
   * answers never do.
   */
  public void managedVersioning(String id, boolean managed) {
    if (managed) {
      managedVersioning.add(id);
    } else {
      managedVersioning.remove(id);
    }
  }

  // ---------------------------------------------------------------- dispatch

  private record Route(String kind, String id, String op) {}

  private static Route route(HttpUrl url) {
    List<String> seg = url.pathSegments();
    // /v1/<kind>/<id>/<op...>
    if (seg.size() < 4) {
      return new Route(seg.size() > 1 ? seg.get(1) : "", "", "");
    }
    return new Route(seg.get(1), seg.get(2), String.join("/", seg.subList(3, seg.size())));
  }

  private MockResponse handle(RecordedRequest request) throws IOException {
    HttpUrl url = request.getRequestUrl();
    Route r = route(url);
    counts.computeIfAbsent(r.kind + "/" + r.op, k -> new AtomicInteger()).incrementAndGet();
    byte[] body = request.getBody().readByteArray();
    if (scripted && r.kind.equals("table")) {
      switch (r.op) {
        case "rename":
          return rename(r.id, body);
        case "schema_metadata/update":
          Map<String, String> next = new TreeMap<>();
          JSON.readTree(body).fields().forEachRemaining(f -> next.put(f.getKey(),
              f.getValue().asText()));
          properties.put(r.id, next);
          return json(200, JSON.valueToTree(next));
        default:
          break;
      }
    }
    Response upstream = forward(request.getMethod(), url, body, request.getHeader("Content-Type"),
        pageSize > 0 && url.pathSegments().get(url.pathSegments().size() - 1).equals("list"));
    try (upstream) {
      byte[] answer = upstream.body() == null ? new byte[0] : upstream.body().bytes();
      if ((forceManagedVersioning || managedVersioning.contains(r.id))
          && upstream.isSuccessful() && r.kind.equals("table") && r.op.equals("describe")) {
        ObjectNode node = (ObjectNode) JSON.readTree(answer);
        node.put("managed_versioning", true);
        return json(200, node);
      }
      if (scripted && upstream.isSuccessful()) {
        if (r.op.equals("list") && request.getMethod().equals("GET")) {
          return page(url, answer);
        }
        if (r.kind.equals("table") && r.op.equals("describe")) {
          return describe(r.id, url, answer);
        }
        if (r.kind.equals("table") && r.op.equals("declare")) {
          return declare(r.id, body, answer);
        }
        if (r.kind.equals("table") && (r.op.equals("drop") || r.op.equals("deregister"))) {
          properties.remove(r.id);
        }
      }
      MockResponse out = new MockResponse().setResponseCode(upstream.code());
      String ct = upstream.header("Content-Type");
      if (ct != null) {
        out.setHeader("Content-Type", ct);
      }
      return out.setBody(new okio.Buffer().write(answer));
    }
  }

  private Response forward(String method, HttpUrl url, byte[] body, String contentType,
      boolean stripPaging) throws IOException {
    HttpUrl.Builder u = url.newBuilder().scheme(target.scheme()).host(target.host())
        .port(target.port());
    if (stripPaging) {
      u.removeAllQueryParameters("page_token").removeAllQueryParameters("limit");
    }
    RequestBody rb = method.equals("GET") ? null : RequestBody.create(body,
        contentType == null ? JSON_TYPE : MediaType.get(contentType));
    return http.newCall(new Request.Builder().url(u.build()).method(method, rb).build())
        .execute();
  }

  private static MockResponse json(int status, JsonNode node) throws IOException {
    return new MockResponse().setResponseCode(status).setHeader("Content-Type", "application/json")
        .setBody(JSON.writeValueAsString(node));
  }

  private static MockResponse error(int status, int code, String message) throws IOException {
    ObjectNode n = JSON.createObjectNode();
    n.put("code", code);
    n.put("error", message);
    return json(status, n);
  }

  // ---------------------------------------------------------------- scripted behaviour

  private MockResponse page(HttpUrl url, byte[] answer) throws IOException {
    JsonNode node = JSON.readTree(answer);
    String field = node.has("tables") ? "tables" : "namespaces";
    List<String> all = new ArrayList<>();
    node.path(field).forEach(n -> all.add(n.asText()));
    all.sort(null);
    String token = url.queryParameter("page_token");
    int from = token == null ? 0 : Integer.parseInt(token.substring("p".length()));
    int size = pageSize;
    String limit = url.queryParameter("limit");
    if (limit != null) {
      size = Math.min(size, Integer.parseInt(limit));
    }
    int to = Math.min(all.size(), from + size);
    ObjectNode out = JSON.createObjectNode();
    ArrayNode items = out.putArray(field);
    all.subList(from, to).forEach(items::add);
    if (to < all.size()) {
      out.put("page_token", "p" + to);
    }
    return json(200, out);
  }

  private MockResponse describe(String id, HttpUrl url, byte[] answer) throws IOException {
    ObjectNode node = (ObjectNode) JSON.readTree(answer);
    Map<String, String> props = properties.getOrDefault(id, Map.of());
    node.set("properties", JSON.valueToTree(props));
    if ("true".equals(url.queryParameter("load_detailed_metadata"))) {
      node.set("metadata", JSON.valueToTree(props));
    }
    return json(200, node);
  }

  private MockResponse declare(String id, byte[] request, byte[] answer) throws IOException {
    Map<String, String> props = new TreeMap<>();
    JsonNode p = JSON.readTree(request).path("properties");
    p.fields().forEachRemaining(f -> props.put(f.getKey(), f.getValue().asText()));
    properties.put(id, props);
    ObjectNode node = (ObjectNode) JSON.readTree(answer);
    node.set("properties", JSON.valueToTree(props));
    return json(201, node);
  }

  /** Rename as a server with a catalog would: same data, new name. */
  private MockResponse rename(String id, byte[] body) throws IOException {
    JsonNode req = JSON.readTree(body);
    String delimiter = "$";
    // Path segments arrive decoded.
    List<String> from = List.of(id.split(java.util.regex.Pattern.quote(delimiter)));
    List<String> toNs = new ArrayList<>();
    if (req.has("new_namespace_id") && !req.get("new_namespace_id").isNull()) {
      req.get("new_namespace_id").forEach(n -> toNs.add(n.asText()));
    } else {
      toNs.addAll(from.subList(0, from.size() - 1));
    }
    List<String> to = new ArrayList<>(toNs);
    to.add(req.get("new_table_name").asText());
    String fromId = String.join(delimiter, from);
    String toId = String.join(delimiter, to);

    try (Response d = call("table", fromId, "describe", "{}")) {
      if (d.code() == 404) {
        return error(404, 4, "Table '" + fromId + "' not found");
      }
      String location = JSON.readTree(d.body().bytes()).get("location").asText();
      try (Response exists = call("table", toId, "describe", "{}")) {
        if (exists.isSuccessful()) {
          return error(409, 5, "Table '" + toId + "' already exists");
        }
      }
      try (Response ns = call("namespace", String.join(delimiter, toNs), "exists", "{}")) {
        if (!toNs.isEmpty() && !ns.isSuccessful()) {
          return error(404, 1, "Namespace '" + String.join(delimiter, toNs) + "' not found");
        }
      }
      try (Response x = call("table", fromId, "deregister", "{}")) {
        if (!x.isSuccessful()) {
          return error(500, 18, "deregister failed: " + x.code());
        }
      }
      String relative = location.startsWith(rootDirUri)
          ? location.substring(rootDirUri.length()) : location;
      ObjectNode reg = JSON.createObjectNode();
      reg.put("location", relative);
      try (Response x = call("table", toId, "register", JSON.writeValueAsString(reg))) {
        if (!x.isSuccessful()) {
          return error(500, 18, "register failed: " + x.body().string());
        }
      }
      Map<String, String> props = properties.remove(fromId);
      if (props != null) {
        properties.put(toId, props);
      }
      return json(200, JSON.createObjectNode());
    }
  }

  private Response call(String kind, String id, String op, String json) throws IOException {
    HttpUrl u = target.newBuilder().addPathSegment("v1").addPathSegment(kind)
        .addPathSegment(id.isEmpty() ? "$" : id).addPathSegments(op).build();
    return http.newCall(new Request.Builder().url(u)
        .post(RequestBody.create(json, JSON_TYPE)).build()).execute();
  }

  @Override
  public void close() throws IOException {
    server.shutdown();
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }
}
