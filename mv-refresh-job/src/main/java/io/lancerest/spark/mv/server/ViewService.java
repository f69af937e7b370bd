package io.lancerest.spark.mv.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.lancerest.client.error.ErrorCode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Headers;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's HTTP side: the materialized-view routes go to {@link ViewEndpoints}, every other
 * request is streamed to the upstream and its answer streamed back, status, headers and body as
 * they are.
 */
final class ViewService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ViewService.class);
  private static final String MV_PREFIX = "/v1/materialized_view/";
  private static final int HTTP_THREADS = 32;

  private final HttpServer server;
  private final ExecutorService threads;
  private final ViewEndpoints endpoints;
  private final Upstream upstream;
  private final long maxBodyBytes;

  ViewService(String host, int port, long maxBodyBytes, ViewEndpoints endpoints,
      Upstream upstream) throws IOException {
    this.endpoints = endpoints;
    this.upstream = upstream;
    this.maxBodyBytes = maxBodyBytes;
    server = HttpServer.create(new InetSocketAddress(host, port), 128);
    AtomicInteger n = new AtomicInteger();
    threads = Executors.newFixedThreadPool(HTTP_THREADS, r -> {
      Thread t = new Thread(r, "mv-service-http-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(threads);
    server.createContext("/", this::handle);
  }

  void start() {
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  /** The materialized-view route of a path, or {@code null}: {@code [rawId, op]}. */
  static String[] mvRoute(String method, String rawPath) {
    if (!method.equals("POST") || !rawPath.startsWith(MV_PREFIX)) {
      return null;
    }
    String rest = rawPath.substring(MV_PREFIX.length());
    int slash = rest.indexOf('/');
    if (slash <= 0) {
      return null;
    }
    String op = rest.substring(slash + 1);
    if (op.endsWith("/")) {
      op = op.substring(0, op.length() - 1);
    }
    return List.of("create", "refresh", "status", "job/describe", "job/list", "job/cancel")
        .contains(op)
        ? new String[] {rest.substring(0, slash), op} : null;
  }

  /** The id of a path segment: percent-decoded, split at the delimiter. */
  static List<String> id(String rawSegment, String delimiter) {
    String decoded = decode(rawSegment.replace("+", "%2B"), "the id of the path");
    List<String> id = List.of(decoded.split(java.util.regex.Pattern.quote(delimiter), -1));
    if (id.stream().anyMatch(String::isEmpty)) {
      throw ServiceError.badRequest("The id '" + decoded + "' has an empty part (delimiter '"
          + delimiter + "')");
    }
    return id;
  }

  static String delimiter(String rawQuery) {
    if (rawQuery != null) {
      for (String kv : rawQuery.split("&")) {
        if (kv.startsWith("delimiter=")) {
          String d = decode(kv.substring("delimiter=".length()), "the delimiter");
          if (d.isEmpty()) {
            throw ServiceError.badRequest("The delimiter is empty");
          }
          return d;
        }
      }
    }
    return "$";
  }

  private static String decode(String raw, String what) {
    try {
      return URLDecoder.decode(raw, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw ServiceError.badRequest("Bad percent-encoding in " + what + ": " + e.getMessage());
    }
  }

  private void handle(HttpExchange ex) {
    try (ex) {
      URI u = ex.getRequestURI();
      String[] route = mvRoute(ex.getRequestMethod(), u.getRawPath());
      if (route == null) {
        forward(ex, u);
      } else {
        serve(ex, u, route);
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("Request {} {} ended with {}", ex.getRequestMethod(),
          ex.getRequestURI().getRawPath(), e.toString());
    }
  }

  private void serve(HttpExchange ex, URI u, String[] route) throws IOException {
    String path = u.getRawPath();
    ViewEndpoints.Answer a;
    try {
      byte[] body = bounded(ex.getRequestBody());
      String delimiter = delimiter(u.getRawQuery());
      List<String> viewId = id(route[0], delimiter);
      Headers caller = Upstream.forwardable(ex.getRequestHeaders());
      a = switch (route[1]) {
        case "create" -> endpoints.create(viewId, delimiter, body, caller);
        case "refresh" -> endpoints.refresh(viewId, delimiter, body, caller);
        case "job/describe" -> endpoints.describeJob(viewId, delimiter, body, caller);
        case "job/cancel" -> endpoints.cancelJob(viewId, delimiter, body, caller);
        case "status" -> endpoints.status(viewId, delimiter, body, caller);
        default -> endpoints.listJobs(viewId, delimiter, body, caller);
      };
    } catch (ViewEndpoints.Refused r) {
      if (r.check.wwwAuthenticate() != null) {
        ex.getResponseHeaders().set("WWW-Authenticate", r.check.wwwAuthenticate());
      }
      a = new ViewEndpoints.Answer(r.check.status(), r.check.body(),
          r.check.contentType() == null ? "application/json" : r.check.contentType(), 0);
    } catch (RuntimeException | Error e) {
      ServiceError se = ServiceError.of(e);
      if (se.status >= 500) {
        LOG.warn("{} {}: {}", ex.getRequestMethod(), path, se.getMessage());
      }
      a = new ViewEndpoints.Answer(se.status, se.body(path), "application/json",
          se.retryAfterSeconds);
    }
    if (a.retryAfterSeconds() > 0) {
      ex.getResponseHeaders().set("Retry-After", Integer.toString(a.retryAfterSeconds()));
    }
    ex.getResponseHeaders().set("Content-Type", a.contentType());
    ex.sendResponseHeaders(a.status(), a.body().length == 0 ? -1 : a.body().length);
    if (a.body().length > 0) {
      try (OutputStream out = ex.getResponseBody()) {
        out.write(a.body());
      }
    }
  }

  /** The request body, or a 400 as soon as it passes the limit (the rest is never read). */
  private byte[] bounded(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    long total = 0;
    for (int n; (n = in.read(buf)) > 0; ) {
      total += n;
      if (total > maxBodyBytes) {
        throw ServiceError.badRequest("The request body is larger than " + maxBodyBytes
            + " bytes, the limit of this service (--max-body-bytes)");
      }
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  private void forward(HttpExchange ex, URI u) throws IOException {
    String method = ex.getRequestMethod();
    if (!Upstream.plainPath(u.getRawPath())) {
      answer(ex, u, ServiceError.badRequest("The path has a '.' or '..' segment; this service "
          + "forwards paths as they are and refuses those"));
      return;
    }
    String lengthHeader = ex.getRequestHeaders().getFirst("Content-Length");
    long length;
    try {
      length = lengthHeader == null ? -1 : Long.parseLong(lengthHeader.trim());
    } catch (NumberFormatException e) {
      answer(ex, u, ServiceError.badRequest("Content-Length '" + lengthHeader + "' is not a "
          + "number"));
      return;
    }
    String te = ex.getRequestHeaders().getFirst("Transfer-Encoding");
    boolean hasBody = length > 0 || (length < 0 && te != null);
    Response r;
    try {
      r = upstream.forward(method, u.getRawPath(), u.getRawQuery(),
          Upstream.forwardable(ex.getRequestHeaders()), hasBody ? ex.getRequestBody() : null,
          length);
    } catch (java.net.ConnectException | java.net.UnknownHostException
        | java.net.NoRouteToHostException e) {
      // Nothing reached the upstream: the request may be sent again.
      answer(ex, u, new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The upstream "
          + "namespace at " + upstream.display() + " cannot be reached ("
          + e.getClass().getSimpleName() + ")", 5, e));
      return;
    } catch (IOException e) {
      // The request may have reached the upstream: no Retry-After, a write may have happened.
      answer(ex, u, new ServiceError(502, ErrorCode.SERVICE_UNAVAILABLE, "The upstream "
          + "namespace at " + upstream.display() + " failed to answer ("
          + e.getClass().getSimpleName() + "); the request may or may not have been applied",
          0, e));
      return;
    } catch (RuntimeException e) {
      answer(ex, u, ServiceError.badRequest("The request cannot be forwarded: "
          + e.getMessage()));
      return;
    }
    try (r) {
      for (String name : r.headers().names()) {
        if (!Upstream.HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
          ex.getResponseHeaders().put(name, r.headers(name));
        }
      }
      long n = r.body() == null ? 0 : r.body().contentLength();
      boolean noBody = method.equals("HEAD") || r.code() == 204 || r.code() == 304 || n == 0;
      ex.sendResponseHeaders(r.code(), noBody ? -1 : Math.max(n, 0));
      if (!noBody) {
        try (OutputStream out = ex.getResponseBody(); InputStream in = r.body().byteStream()) {
          in.transferTo(out);
        }
      }
    }
  }

  private static void answer(HttpExchange ex, URI u, ServiceError se) throws IOException {
    byte[] b = se.body(u.getRawPath());
    ex.getResponseHeaders().set("Content-Type", "application/json");
    if (se.retryAfterSeconds > 0) {
      ex.getResponseHeaders().set("Retry-After", Integer.toString(se.retryAfterSeconds));
    }
    ex.sendResponseHeaders(se.status, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
    try {
      threads.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
