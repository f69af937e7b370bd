package io.lancerest.client.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A credential-vending REST namespace for tests, in front of a real one (lance-core's dir
 * server): every request must carry {@code Authorization: Bearer <token>} (401 otherwise, as a
 * server that requires authentication answers), is forwarded unchanged, and every table answer
 * that has a {@code location} (DescribeTable, DeclareTable, CreateTable) gets
 * {@code storage_options} with S3 keys of an {@link ExpiringKeyS3Proxy} that expire after
 * {@code lifetime}, and their {@code expires_at_millis} (the key lance-core reads).
 */
public final class VendingNamespace implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> HOP = Set.of("host", "content-length", "connection",
      "transfer-encoding", "expect", "upgrade", "keep-alive", "authorization");

  private final String upstream;
  private final String token;
  private final ExpiringKeyS3Proxy s3;
  private final Duration lifetime;
  private final HttpServer server;
  private final ExecutorService threads = Executors.newFixedThreadPool(8, r -> {
    Thread t = new Thread(r, "vending-namespace");
    t.setDaemon(true);
    return t;
  });
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final AtomicLong vended = new AtomicLong();
  private final AtomicLong unauthorized = new AtomicLong();

  private VendingNamespace(String upstream, String token, ExpiringKeyS3Proxy s3,
      Duration lifetime) {
    this.upstream = upstream.endsWith("/") ? upstream.substring(0, upstream.length() - 1)
        : upstream;
    this.token = token;
    this.s3 = s3;
    this.lifetime = lifetime;
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    } catch (IOException e) {
      throw new UncheckedIOException("the vending namespace did not start", e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  /** Starts it on a free port of 127.0.0.1, in front of {@code upstream}. */
  public static VendingNamespace start(String upstream, String token, ExpiringKeyS3Proxy s3,
      Duration lifetime) {
    return new VendingNamespace(upstream, token, s3, lifetime);
  }

  public String uri() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Table answers that got fresh keys. */
  public long vended() {
    return vended.get();
  }

  /** Requests refused for want of the token. */
  public long unauthorized() {
    return unauthorized.get();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body = ex.getRequestBody().readAllBytes();
      String auth = ex.getRequestHeaders().getFirst("Authorization");
      if (!("Bearer " + token).equals(auth)) {
        unauthorized.incrementAndGet();
        reply(ex, 401, ("{\"error\":\"a bearer token is required\",\"code\":401,\"type\":"
            + "\"Unauthenticated\"}").getBytes(StandardCharsets.UTF_8), "application/json");
        return;
      }
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(upstream
          + ex.getRequestURI().toString())).timeout(Duration.ofSeconds(60))
          .method(ex.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofByteArray(body));
      ex.getRequestHeaders().forEach((k, vs) -> {
        if (!HOP.contains(k.toLowerCase(java.util.Locale.ROOT))) {
          vs.forEach(v -> b.header(k, v));
        }
      });
      HttpResponse<byte[]> r;
      try {
        r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        reply(ex, 503, new byte[0], "text/plain");
        return;
      }
      byte[] out = r.body();
      String type = r.headers().firstValue("Content-Type").orElse("application/json");
      if (r.statusCode() / 100 == 2 && ex.getRequestURI().getPath().startsWith("/v1/table/")
          && type.contains("json") && out.length > 0) {
        out = withCredentials(out);
      }
      reply(ex, r.statusCode(), out, type);
    }
  }

  private byte[] withCredentials(byte[] answer) throws IOException {
    com.fasterxml.jackson.databind.JsonNode n = JSON.readTree(answer);
    if (!(n instanceof ObjectNode o) || !o.hasNonNull("location")) {
      return answer;
    }
    ObjectNode storage = o.putObject("storage_options");
    long expires = System.currentTimeMillis() + lifetime.toMillis();
    ExpiringKeyS3Proxy.Key k = s3.mint(expires);
    for (Map.Entry<String, String> e : s3.storageOptions(k).entrySet()) {
      storage.put(e.getKey(), e.getValue());
    }
    storage.put("expires_at_millis", Long.toString(expires));
    vended.incrementAndGet();
    return JSON.writeValueAsBytes(o);
  }

  private static void reply(HttpExchange ex, int status, byte[] body, String type)
      throws IOException {
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream o = ex.getResponseBody()) {
        o.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }

  /** For messages. */
  @Override
  public String toString() {
    return "VendingNamespace{" + uri() + " -> " + upstream + ", " + vended + " vended, "
        + unauthorized + " unauthorized, lifetime " + lifetime + "}";
  }
}
