package io.lancerest.spark.mv.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import okhttp3.Response;

/**
 * A namespace that requires a bearer token, in front of the directory server: a known token with
 * rights is forwarded (by the service's own {@link Upstream}), a known token without them gets
 * 403, anything else 401 with {@code WWW-Authenticate}, each with the spec's error body. The
 * rights of {@link #ANONYMOUS}, when given, are those of a request without a token (a server
 * that lets anyone read). A mock only because no real server here authenticates: the
 * directory server has no authentication.
 */
final class TokenGate implements AutoCloseable {
  /** The key of the rights of a request without {@code Authorization}. */
  static final String ANONYMOUS = "";
  /** What a 401 asks the client for. */
  static final String CHALLENGE = "Bearer realm=\"token-gate\"";

  /**
   * What a token may do: everything, nothing, or the objects under some top-level namespaces
   * (and the root's listings, which a catalog reads when it starts); {@code write} false: read
   * routes only, every other route is refused with 403.
   */
  record Rights(Set<String> namespaces, boolean write) {
    static final Rights ALL = new Rights(null, true);
    static final Rights NONE = new Rights(Set.of(), true);
    /** Every object, read only. */
    static final Rights READ = new Rights(null, false);

    static Rights only(String... namespaces) {
      return new Rights(Set.of(namespaces), true);
    }

    boolean allows(String topNamespace) {
      return namespaces == null || topNamespace == null && !namespaces.isEmpty()
          || namespaces.contains(topNamespace);
    }
  }

  /** The routes that only read, by their last segments (the server's own auth dialect). */
  private static final Set<String> READS = Set.of("describe", "exists", "list", "query",
      "count_rows", "stats", "explain_plan", "analyze_plan", "version");

  private final HttpServer server;
  private final ExecutorService workers = Executors.newFixedThreadPool(16, r -> {
    Thread t = new Thread(r, "token-gate");
    t.setDaemon(true);
    return t;
  });
  private final Upstream upstream;
  private final Map<String, Rights> tokens;

  TokenGate(String target, Map<String, Rights> tokens) throws IOException {
    this.upstream = new Upstream(target);
    this.tokens = Map.copyOf(tokens);
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.setExecutor(workers);
    server.createContext("/", this::handle);
    server.start();
  }

  String uri() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String auth = ex.getRequestHeaders().getFirst("Authorization");
      boolean known = auth != null && auth.startsWith("Bearer ")
          && tokens.containsKey(auth.substring("Bearer ".length()));
      Rights r = auth == null ? tokens.get(ANONYMOUS)
          : known ? tokens.get(auth.substring("Bearer ".length())) : null;
      if (r == null || !r.allows(topNamespace(ex.getRequestURI()))
          || !r.write() && !reads(ex.getRequestMethod(), ex.getRequestURI())) {
        // whoever showed no known token is asked for one; a known one is refused
        int status = known ? 403 : 401;
        if (!known) {
          ex.getResponseHeaders().set("WWW-Authenticate", CHALLENGE);
        }
        byte[] b = ("{\"error\":\"" + (!known ? "missing or unknown token"
            : "this token may not use the namespace") + "\",\"code\":" + (!known ? 16 : 15)
            + "}").getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(b);
        }
        return;
      }
      URI u = ex.getRequestURI();
      String lengthHeader = ex.getRequestHeaders().getFirst("Content-Length");
      long length = lengthHeader == null ? -1 : Long.parseLong(lengthHeader);
      try (Response up = upstream.forward(ex.getRequestMethod(), u.getRawPath(),
          u.getRawQuery(), Upstream.forwardable(ex.getRequestHeaders()),
          length > 0 ? ex.getRequestBody() : null, length)) {
        byte[] answer = up.body() == null ? new byte[0] : up.body().bytes();
        for (String name : up.headers().names()) {
          if (!Upstream.HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
            ex.getResponseHeaders().put(name, up.headers(name));
          }
        }
        ex.sendResponseHeaders(up.code(), answer.length == 0 ? -1 : answer.length);
        if (answer.length > 0) {
          try (OutputStream out = ex.getResponseBody()) {
            out.write(answer);
          }
        }
      }
    }
  }

  /** Whether a request only reads: a GET, or a POST to a read route. */
  static boolean reads(String method, URI u) {
    String path = u.getRawPath();
    return method.equals("GET") || READS.contains(path.substring(path.lastIndexOf('/') + 1));
  }

  /** The first part of the object's id in {@code /v1/<kind>/<id>/<op>}, {@code null}: root. */
  static String topNamespace(URI u) {
    String[] parts = u.getRawPath().split("/");
    if (parts.length < 5 || !parts[1].equals("v1")) {
      return null;
    }
    String delimiter = "$";
    if (u.getRawQuery() != null) {
      for (String kv : u.getRawQuery().split("&")) {
        if (kv.startsWith("delimiter=")) {
          delimiter = URLDecoder.decode(kv.substring("delimiter=".length()),
              StandardCharsets.UTF_8);
        }
      }
    }
    String id = URLDecoder.decode(parts[3], StandardCharsets.UTF_8);
    if (id.isEmpty() || id.equals(delimiter)) {
      return null;
    }
    int at = id.indexOf(delimiter);
    return at < 0 ? id : id.substring(0, at);
  }

  @Override
  public void close() {
    server.stop(0);
    workers.shutdownNow();
    upstream.close();
  }
}
