package io.lancerest.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * A fault-injecting HTTP/1.1 proxy in front of a real REST namespace server, for tests only.
 *
 * <p>It listens on the loopback interface alone and forwards every request upstream unless a
 * {@link Rule} matches it. Rules select requests by method and route suffix ({@code
 * table/declare}, {@code namespace/list}: the path after {@code /v1/} with the identifier
 * segment left out) and by occurrence (the nth matching request, for a number of times), and
 * then drop or reset the connection, delay, answer a status of their own, lose the upstream's
 * answer after the upstream applied the request, truncate or replace the body, or rewrite the
 * upstream's JSON. It counts what it saw and, separately, what reached the upstream: the count
 * that proves a mutation was not applied twice.
 *
 * <p>Bounded: a fixed number of connection threads, request bodies up to {@link
 * #MAX_REQUEST_BYTES}, and at most {@link #MAX_REQUESTS} requests per proxy, after which it
 * answers 500 so a client stuck in a retry loop fails instead of hanging the build.
 *
 * <p>Optionally it is also an OAuth2 token endpoint ({@code POST /oauth/token}, client
 * credentials) and then refuses, with 401, every other request whose bearer token it did not
 * issue or that has expired (see {@link #requireOAuth}).
 */
public final class FaultProxy implements AutoCloseable {
  public static final int MAX_REQUESTS = 200_000;
  public static final int MAX_REQUEST_BYTES = 64 << 20;
  private static final int MAX_CONNECTIONS = 64;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> HOP_HEADERS = Set.of("host", "connection", "content-length",
      "transfer-encoding", "accept-encoding", "keep-alive", "content-encoding");

  /** What a rule does to a matching request. */
  public enum Action {
    /** Close the connection without an answer; nothing is forwarded. */
    DROP,
    /** Reset the connection (TCP RST); nothing is forwarded. */
    RESET,
    /** Forward, let the upstream apply it, then close without an answer. */
    LOSE_ANSWER,
    /** Forward, then reset the connection instead of answering. */
    RESET_AFTER,
    /** Forward, then hold the answer for {@code delay} before sending it. */
    DELAY,
    /** Answer {@code status} (with {@code Retry-After} when set); nothing is forwarded. */
    STATUS,
    /** Forward (the upstream applies it), then answer {@code status} instead of its answer. */
    STATUS_AFTER,
    /** Forward, then send the headers and only half of the body, then close. */
    TRUNCATE,
    /** Answer {@code body} with {@code status}; nothing is forwarded. */
    BODY,
    /** Answer a JSON-looking body of {@code hugeBytes} bytes, streamed; nothing is forwarded. */
    HUGE_BODY,
    /** Forward, then pass the upstream's JSON answer through {@code rewrite}. */
    REWRITE
  }

  /** One fault: which requests, which occurrences, and what happens to them. */
  public static final class Rule {
    final String method;
    final String routeSuffix;
    private final AtomicInteger seen = new AtomicInteger();
    private final AtomicInteger applied = new AtomicInteger();
    private int from = 1;
    private int times = 1;
    private String idContains;
    Action action = Action.STATUS;
    int status = 503;
    String retryAfter;
    Duration delay = Duration.ZERO;
    byte[] body = new byte[0];
    String contentType = "application/json";
    long hugeBytes;
    UnaryOperator<ObjectNode> rewrite = UnaryOperator.identity();
    java.util.function.Consumer<byte[]> afterForward = b -> { };

    Rule(String method, String routeSuffix) {
      this.method = method;
      this.routeSuffix = routeSuffix;
    }

    /** Start at the nth matching request (1 = the first). */
    public Rule nth(int n) {
      this.from = n;
      return this;
    }

    /** Apply to this many matching requests in a row (default 1). */
    public Rule times(int n) {
      this.times = n;
      return this;
    }

    /** Apply to every matching request from {@link #nth} on. */
    public Rule always() {
      return times(Integer.MAX_VALUE);
    }

    /** Only requests whose (decoded) identifier segment contains {@code part}. */
    public Rule forId(String part) {
      this.idContains = part;
      return this;
    }

    public Rule drop() {
      action = Action.DROP;
      return this;
    }

    public Rule reset() {
      action = Action.RESET;
      return this;
    }

    public Rule loseAnswer() {
      action = Action.LOSE_ANSWER;
      return this;
    }

    public Rule resetAfter() {
      action = Action.RESET_AFTER;
      return this;
    }

    public Rule delayAnswer(Duration d) {
      action = Action.DELAY;
      delay = d;
      return this;
    }

    /** A refusal before anything is applied: 503, 429, with or without Retry-After (seconds). */
    public Rule status(int code, String retryAfterOrNull) {
      action = Action.STATUS;
      status = code;
      retryAfter = retryAfterOrNull;
      body = ("{\"error\":{\"message\":\"injected " + code + "\",\"type\":\"Injected\"}}")
          .getBytes(StandardCharsets.UTF_8);
      return this;
    }

    /** The upstream applied the request, but the client is told {@code code}. */
    public Rule statusAfterApplying(int code) {
      status(code, null);
      action = Action.STATUS_AFTER;
      return this;
    }

    public Rule truncate() {
      action = Action.TRUNCATE;
      return this;
    }

    public Rule body(int code, String type, String text) {
      action = Action.BODY;
      status = code;
      contentType = type;
      body = text.getBytes(StandardCharsets.UTF_8);
      return this;
    }

    public Rule hugeBody(long bytes) {
      action = Action.HUGE_BODY;
      hugeBytes = bytes;
      return this;
    }

    public Rule rewrite(UnaryOperator<ObjectNode> f) {
      action = Action.REWRITE;
      rewrite = f;
      return this;
    }

    /**
     * Runs {@code hook} with the upstream's answer once it has applied the request, before the
     * fault is played: how a test makes another party act while the client waits.
     */
    public Rule afterForward(java.util.function.Consumer<byte[]> hook) {
      this.afterForward = hook;
      return this;
    }

    /** How many requests this rule acted on. */
    public int applied() {
      return applied.get();
    }

    boolean matches(String m, String route, String id) {
      return (method.equals("*") || method.equals(m)) && route.endsWith(routeSuffix)
          && (idContains == null || id.contains(idContains));
    }

    /** Called once per matching request; true when this occurrence is to be faulted. */
    boolean take() {
      int n = seen.incrementAndGet();
      if (n >= from && n - from < times) {
        applied.incrementAndGet();
        return true;
      }
      return false;
    }
  }

  /** A request as read off the socket. */
  record Exchange(String method, String target, Map<String, String> headers, byte[] body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private final HttpUrl upstream;
  private final ServerSocket socket;
  private final ExecutorService connections;
  private final OkHttpClient http;
  private final Thread acceptor;
  private final List<Rule> rules = new CopyOnWriteArrayList<>();
  private final Map<String, AtomicInteger> seenCounts = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> upstreamCounts = new ConcurrentHashMap<>();
  private final AtomicInteger total = new AtomicInteger();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile OAuthEndpoint oauth;
  private volatile int pageSize;
  private final Map<String, byte[]> listings = new ConcurrentHashMap<>();

  private FaultProxy(String upstreamUri) throws IOException {
    this.upstream = HttpUrl.get(upstreamUri);
    this.socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.connections = new ThreadPoolExecutor(0, MAX_CONNECTIONS, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, "fault-proxy-conn");
          t.setDaemon(true);
          return t;
        });
    this.http = new OkHttpClient.Builder().readTimeout(120, TimeUnit.SECONDS)
        .retryOnConnectionFailure(false).followRedirects(false).build();
    this.acceptor = new Thread(this::acceptLoop, "fault-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A proxy on an ephemeral loopback port in front of {@code upstreamUri}. */
  public static FaultProxy start(String upstreamUri) {
    try {
      return new FaultProxy(upstreamUri);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String uri() {
    return "http://127.0.0.1:" + socket.getLocalPort();
  }

  /** A new rule for {@code method} ("*" for any) and a route suffix such as "table/describe". */
  public Rule on(String method, String routeSuffix) {
    Rule r = new Rule(method, routeSuffix);
    rules.add(r);
    return r;
  }

  /**
   * Makes every GET list answer (ListNamespaces, ListTables) come in pages of {@code size}
   * names, as a server with paging would: the directory server answers everything at once.
   * The upstream is asked for the whole list and the proxy slices it by its own page tokens.
   */
  public void pageLists(int size) {
    this.pageSize = size;
  }

  /** Forgets every rule and count (tests call it first; the proxy is shared per class). */
  public void reset() {
    rules.clear();
    listings.clear();
    seenCounts.clear();
    upstreamCounts.clear();
  }

  /** Requests that arrived for a route (faulted or not). */
  public int seen(String route) {
    return get(seenCounts, route);
  }

  /** Requests for a route that were forwarded and answered by the upstream server. */
  public int upstream(String route) {
    return get(upstreamCounts, route);
  }

  public Map<String, Integer> upstreamCounts() {
    Map<String, Integer> out = new TreeMap<>();
    upstreamCounts.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  private static int get(Map<String, AtomicInteger> m, String route) {
    AtomicInteger c = m.get(route);
    return c == null ? 0 : c.get();
  }

  /**
   * Serves {@code POST /oauth/token} for {@code clientId}/{@code clientSecret}, issuing tokens
   * that live {@code lifetime}, and answers 401 to any other request without a live token.
   */
  public OAuthEndpoint requireOAuth(String clientId, String clientSecret, Duration lifetime) {
    OAuthEndpoint o = new OAuthEndpoint(clientId, clientSecret, lifetime);
    this.oauth = o;
    return o;
  }

  // ---------------------------------------------------------------- serving

  private void acceptLoop() {
    while (!socket.isClosed()) {
      try {
        Socket s = socket.accept();
        open.add(s);
        try {
          connections.execute(() -> serve(s));
        } catch (RejectedExecutionException e) {
          closeQuietly(s); // over the connection bound: the client sees a dropped connection
        }
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      s.setSoTimeout(120_000);
      // Head and body go out as separate writes: without this, Nagle's algorithm and the
      // client's delayed ACK add ~40 ms to every answer.
      s.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(s.getInputStream());
      OutputStream out = new java.io.BufferedOutputStream(s.getOutputStream(), 64 * 1024);
      while (true) {
        Exchange ex = read(in);
        if (ex == null) {
          return;
        }
        if (!handle(ex, s, out)) {
          return;
        }
      }
    } catch (IOException e) {
      // the client went away or the connection was faulted on purpose
    } finally {
      open.remove(s);
    }
  }

  /** Answers one request; false when the connection is to be closed. */
  private boolean handle(Exchange ex, Socket s, OutputStream out) throws IOException {
    if (total.incrementAndGet() > MAX_REQUESTS) {
      respond(out, 500, "text/plain", "fault proxy: request budget exhausted".getBytes(
          StandardCharsets.UTF_8), Map.of());
      return false;
    }
    String path = ex.target.contains("?") ? ex.target.substring(0, ex.target.indexOf('?'))
        : ex.target;
    OAuthEndpoint o = oauth;
    if (o != null) {
      if (path.equals("/oauth/token")) {
        OAuthEndpoint.Answer a = o.token(ex);
        respond(out, a.status(), "application/json", a.body(), Map.of());
        return true;
      }
      if (!o.accepts(ex.header("authorization"))) {
        respond(out, 401, "application/json",
            "{\"error\":{\"message\":\"token missing or expired\",\"type\":\"Unauthenticated\"}}"
                .getBytes(StandardCharsets.UTF_8), Map.of("WWW-Authenticate", "Bearer"));
        return true;
      }
    }
    String[] route = route(path);
    count(seenCounts, route[0]);
    Rule rule = null;
    for (Rule r : rules) {
      if (r.matches(ex.method, route[0], route[1]) && r.take()) {
        rule = r;
        break;
      }
    }
    if (rule == null) {
      int size = pageSize;
      if (size > 0 && ex.method.equals("GET") && route[0].endsWith("/list")) {
        Upstream u = page(ex, route[0], size);
        respond(out, u.status, u.contentType, u.body, Map.of());
        return true;
      }
      Upstream u = forward(ex, route[0]);
      respond(out, u.status, u.contentType, u.body, Map.of());
      return true;
    }
    switch (rule.action) {
      case DROP:
        return false;
      case RESET:
        hardReset(s);
        return false;
      case STATUS:
        respond(out, rule.status, rule.contentType, rule.body, rule.retryAfter == null ? Map.of()
            : Map.of("Retry-After", rule.retryAfter));
        return true;
      case BODY:
        respond(out, rule.status, rule.contentType, rule.body, Map.of());
        return true;
      case HUGE_BODY:
        streamHuge(out, rule.hugeBytes);
        return false;
      default:
        break;
    }
    Upstream u = forward(ex, route[0]);
    rule.afterForward.accept(u.body);
    switch (rule.action) {
      case LOSE_ANSWER:
        return false;
      case RESET_AFTER:
        hardReset(s);
        return false;
      case DELAY:
        sleep(rule.delay);
        respond(out, u.status, u.contentType, u.body, Map.of());
        return true;
      case STATUS_AFTER:
        respond(out, rule.status, rule.contentType, rule.body, Map.of());
        return true;
      case TRUNCATE:
        writeHead(out, u.status, u.contentType, u.body.length, Map.of());
        out.write(u.body, 0, u.body.length / 2);
        out.flush();
        return false;
      case REWRITE:
        byte[] body = u.body;
        if (u.status / 100 == 2 && u.body.length > 0) {
          JsonNode n = JSON.readTree(u.body);
          if (n instanceof ObjectNode obj) {
            body = JSON.writeValueAsBytes(rule.rewrite.apply(obj));
          }
        }
        respond(out, u.status, u.contentType, body, Map.of());
        return true;
      default:
        throw new IllegalStateException(rule.action.name());
    }
  }

  /** {route without the id, decoded id}: /v1/table/ns$t/declare gives table/declare, ns$t. */
  static String[] route(String path) {
    String[] seg = path.split("/");
    // "", "v1", kind, id, op...
    if (seg.length < 3) {
      return new String[] {path, ""};
    }
    if (seg.length == 3) {
      return new String[] {seg[2], ""};
    }
    List<String> op = new ArrayList<>(List.of(seg).subList(4, seg.length));
    String kind = seg[2];
    String id = URLDecoder.decode(seg[3].replace("+", "%2B"), StandardCharsets.UTF_8);
    if (kind.equals("table") && seg[3].equals("version")) {
      // /v1/table/version/batch-create has no id segment
      return new String[] {kind + "/version/" + String.join("/", op), ""};
    }
    return new String[] {op.isEmpty() ? kind : kind + "/" + String.join("/", op), id};
  }

  private record Upstream(int status, String contentType, byte[] body) {}

  private Upstream forward(Exchange ex, String route) throws IOException {
    HttpUrl url = HttpUrl.get(upstream.scheme() + "://" + upstream.host() + ":" + upstream.port()
        + ex.target);
    Request.Builder b = new Request.Builder().url(url);
    ex.headers.forEach((k, v) -> {
      if (!HOP_HEADERS.contains(k)) {
        b.header(k, v);
      }
    });
    String ct = ex.header("content-type");
    RequestBody rb = ex.method.equals("GET") || ex.method.equals("HEAD") ? null
        : RequestBody.create(ex.body, ct == null ? null : MediaType.parse(ct));
    b.method(ex.method, rb);
    try (Response r = http.newCall(b.build()).execute()) {
      byte[] body = r.body() == null ? new byte[0] : r.body().bytes();
      count(upstreamCounts, route);
      String type = r.header("Content-Type");
      return new Upstream(r.code(), type == null ? "application/json" : type, body);
    }
  }

  private Upstream page(Exchange ex, String route, int size) throws IOException {
    HttpUrl asked = HttpUrl.get("http://x" + ex.target);
    String whole = asked.newBuilder().removeAllQueryParameters("page_token")
        .removeAllQueryParameters("limit").build().toString().substring("http://x".length());
    String token = asked.queryParameter("page_token");
    // Later pages come from the list read for the first one, as a server's cursor would.
    byte[] listing = token == null ? null : listings.get(whole);
    if (listing == null) {
      Upstream u = forward(new Exchange(ex.method, whole, ex.headers, ex.body), route);
      if (u.status != 200) {
        return u;
      }
      listing = u.body;
      listings.put(whole, listing);
    }
    JsonNode node = JSON.readTree(listing);
    String field = node.has("tables") ? "tables" : "namespaces";
    List<String> all = new ArrayList<>();
    node.path(field).forEach(n -> all.add(n.asText()));
    Collections.sort(all);
    int from = token == null || token.isEmpty() ? 0 : Integer.parseInt(token.substring(1));
    String limit = asked.queryParameter("limit");
    int n = limit == null ? size : Math.min(size, Integer.parseInt(limit));
    int to = Math.min(all.size(), from + n);
    ObjectNode answer = JSON.createObjectNode();
    all.subList(from, to).forEach(answer.putArray(field)::add);
    if (to < all.size()) {
      answer.put("page_token", "p" + to);
    }
    return new Upstream(200, "application/json", JSON.writeValueAsBytes(answer));
  }

  private static void count(Map<String, AtomicInteger> m, String route) {
    m.computeIfAbsent(route, k -> new AtomicInteger()).incrementAndGet();
  }

  // ---------------------------------------------------------------- HTTP/1.1 on the wire

  /** Reads one request, or null at a clean end of stream. */
  static Exchange read(InputStream in) throws IOException {
    String requestLine = line(in);
    if (requestLine == null) {
      return null;
    }
    if (requestLine.isEmpty()) {
      requestLine = line(in); // tolerate a stray CRLF between requests
      if (requestLine == null) {
        return null;
      }
    }
    String[] parts = requestLine.split(" ");
    if (parts.length != 3) {
      throw new IOException("bad request line");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    String h;
    while ((h = line(in)) != null && !h.isEmpty()) {
      int colon = h.indexOf(':');
      if (colon > 0) {
        headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT),
            h.substring(colon + 1).trim());
      }
      if (headers.size() > 200) {
        throw new IOException("too many headers");
      }
    }
    byte[] body;
    String te = headers.get("transfer-encoding");
    if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
      body = readChunked(in);
    } else {
      long len = Long.parseLong(headers.getOrDefault("content-length", "0"));
      if (len > MAX_REQUEST_BYTES) {
        throw new IOException("request body over the proxy's bound");
      }
      body = in.readNBytes((int) len);
    }
    return new Exchange(parts[0], parts[1], headers, body);
  }

  private static byte[] readChunked(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (true) {
      String size = line(in);
      if (size == null) {
        throw new IOException("truncated chunked body");
      }
      int semi = size.indexOf(';');
      int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
      if (n == 0) {
        String trailer;
        while ((trailer = line(in)) != null && !trailer.isEmpty()) {
          // trailers ignored
        }
        return out.toByteArray();
      }
      if (out.size() + n > MAX_REQUEST_BYTES) {
        throw new IOException("request body over the proxy's bound");
      }
      out.write(in.readNBytes(n));
      line(in);
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != -1) {
      if (c == '\n') {
        byte[] bytes = b.toByteArray();
        int len = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1
            : bytes.length;
        return new String(bytes, 0, len, StandardCharsets.ISO_8859_1);
      }
      if (b.size() > 64 * 1024) {
        throw new IOException("header line over 64 KiB");
      }
      b.write(c);
    }
    return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
  }

  private static void writeHead(OutputStream out, int status, String contentType, long length,
      Map<String, String> extra) throws IOException {
    StringBuilder sb = new StringBuilder("HTTP/1.1 ").append(status).append(' ')
        .append(reason(status)).append("\r\n");
    sb.append("Content-Type: ").append(contentType).append("\r\n");
    sb.append("Content-Length: ").append(length).append("\r\n");
    extra.forEach((k, v) -> sb.append(k).append(": ").append(v).append("\r\n"));
    sb.append("\r\n");
    out.write(sb.toString().getBytes(StandardCharsets.ISO_8859_1));
  }

  private static void respond(OutputStream out, int status, String contentType, byte[] body,
      Map<String, String> extra) throws IOException {
    writeHead(out, status, contentType, body.length, extra);
    out.write(body);
    out.flush();
  }

  private static void streamHuge(OutputStream out, long bytes) throws IOException {
    byte[] head = "{\"location\":\"".getBytes(StandardCharsets.US_ASCII);
    writeHead(out, 200, "application/json", bytes, Map.of());
    out.write(head);
    byte[] chunk = new byte[64 * 1024];
    java.util.Arrays.fill(chunk, (byte) 'x');
    long left = bytes - head.length;
    try {
      while (left > 0) {
        int n = (int) Math.min(chunk.length, left);
        out.write(chunk, 0, n);
        left -= n;
      }
      out.flush();
    } catch (SocketException e) {
      // the client stopped reading: what a bounded client should do
    }
  }

  private static String reason(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 201 -> "Created";
      case 204 -> "No Content";
      case 401 -> "Unauthorized";
      case 404 -> "Not Found";
      case 429 -> "Too Many Requests";
      case 500 -> "Internal Server Error";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      case 504 -> "Gateway Timeout";
      default -> "Status";
    };
  }

  private static void hardReset(Socket s) {
    try {
      s.setSoLinger(true, 0); // close() now sends RST instead of FIN
    } catch (SocketException ignored) {
      // already closed
    }
    closeQuietly(s);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // nothing to do
    }
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    List<Socket> all = new ArrayList<>(open);
    all.forEach(FaultProxy::closeQuietly);
    connections.shutdownNow();
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }

  /** Unmodifiable view of the installed rules (for diagnostics in assertion messages). */
  List<Rule> rules() {
    return Collections.unmodifiableList(rules);
  }
}
