package io.lancerest.examples.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An HTTP forwarder in front of the REST server that counts requests by route
 * ({@code table/describe}, {@code namespace/list}, …). It only uses the JDK, so the benchmark
 * needs no test dependency; both catalogs' counting instances point at it. With
 * {@link #requireOAuthAndVend} it also plays a server that requires an OAuth2 token and vends
 * expiring storage credentials.
 */
final class CountingProxy implements AutoCloseable {
  /** Headers the JDK client sets itself and refuses to copy. */
  private static final Set<String> HOP_BY_HOP = Set.of("host", "connection", "content-length",
      "expect", "upgrade", "transfer-encoding", "keep-alive");

  private final HttpServer server;
  private final ExecutorService workers;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .build();
  private final String target;
  private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
  /** The one token it issues once {@link #requireOAuthAndVend} was called, else null. */
  private volatile String token;
  private final AtomicLong tokensIssued = new AtomicLong();

  CountingProxy(String targetUri) throws IOException {
    this.target = targetUri.endsWith("/") ? targetUri.substring(0, targetUri.length() - 1)
        : targetUri;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    workers = Executors.newFixedThreadPool(8, r -> {
      Thread t = new Thread(r, "counting-proxy");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(workers);
    server.createContext("/", this::forward);
    server.start();
  }

  String uri() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /**
   * From now on: {@code POST /oauth/token} issues a bearer token that lives an hour (to any
   * client), every other request without it is refused with 401, and DescribeTable answers
   * carry vended storage options that expire in an hour ({@code expires_at_millis}), as an
   * object-store server's do. Behind such a server, executors renew credentials through the
   * catalog's credential relay.
   */
  void requireOAuthAndVend() {
    token = "bench-" + java.util.UUID.randomUUID();
  }

  /** Tokens issued by {@code /oauth/token}. */
  long tokensIssued() {
    return tokensIssued.get();
  }

  void reset() {
    counts.clear();
  }

  /** Requests per route since the last reset, sorted by route. */
  Map<String, Long> counts() {
    Map<String, Long> out = new TreeMap<>();
    counts.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  long total() {
    return counts.values().stream().mapToLong(AtomicLong::get).sum();
  }

  /** {@code /v1/<kind>/<id>/<op…>} becomes {@code <kind>/<op…>}: the id does not matter. */
  static String route(String path) {
    String[] seg = path.split("/");
    if (seg.length < 5) {
      return path;
    }
    return seg[2] + "/" + String.join("/", List.of(seg).subList(4, seg.length));
  }

  private void forward(HttpExchange ex) throws IOException {
    try (ex) {
      URI u = ex.getRequestURI();
      counts.computeIfAbsent(route(u.getRawPath()), k -> new AtomicLong()).incrementAndGet();
      byte[] body = ex.getRequestBody().readAllBytes();
      String required = token;
      if (required != null && u.getRawPath().equals("/oauth/token")) {
        tokensIssued.incrementAndGet();
        reply(ex, 200, ("{\"access_token\":\"" + required + "\",\"token_type\":\"bearer\","
            + "\"expires_in\":3600}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return;
      }
      if (required != null
          && !("Bearer " + required).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
        reply(ex, 401, "{\"error\":\"a bearer token is required\",\"code\":401}"
            .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return;
      }
      String query = u.getRawQuery() == null ? "" : "?" + u.getRawQuery();
      HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(target + u.getRawPath() + query))
          .method(ex.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofByteArray(body));
      ex.getRequestHeaders().forEach((name, values) -> {
        if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
          values.forEach(v -> req.header(name, v));
        }
      });
      HttpResponse<byte[]> resp;
      try {
        resp = http.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        ex.sendResponseHeaders(502, -1);
        return;
      }
      resp.headers().map().forEach((name, values) -> {
        if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT)) && !name.startsWith(":")) {
          ex.getResponseHeaders().put(name, values);
        }
      });
      byte[] answer = resp.body();
      if (required != null && resp.statusCode() == 200 && u.getRawPath().startsWith("/v1/table/")
          && u.getRawPath().endsWith("/describe")) {
        answer = withExpiringCredentials(answer);
      }
      ex.sendResponseHeaders(resp.statusCode(), answer.length == 0 ? -1 : answer.length);
      if (answer.length > 0) {
        try (OutputStream out = ex.getResponseBody()) {
          out.write(answer);
        }
      }
    }
  }

  private static byte[] withExpiringCredentials(byte[] describe) throws IOException {
    com.fasterxml.jackson.databind.ObjectMapper json = io.lancerest.client.LanceJson.mapper();
    com.fasterxml.jackson.databind.node.ObjectNode n =
        (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(describe);
    n.putObject("storage_options").put("expires_at_millis",
        Long.toString(System.currentTimeMillis() + 3_600_000));
    return json.writeValueAsBytes(n);
  }

  private static void reply(HttpExchange ex, int status, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    workers.shutdownNow();
  }
}
