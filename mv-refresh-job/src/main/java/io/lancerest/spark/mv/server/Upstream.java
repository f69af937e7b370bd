package io.lancerest.spark.mv.server;

import io.lancerest.client.error.AlreadyExistsException;
import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.internal.ErrorClassifier;
import io.lancerest.client.internal.StaleConnections;
import io.lancerest.client.spec.Operation;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import okhttp3.Headers;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import okio.Okio;
import okio.Source;

/**
 * The upstream namespace as the service's HTTP side sees it: requests forwarded unchanged, and
 * the checks made as the caller (with the caller's own headers) before any work.
 */
final class Upstream implements AutoCloseable {
  /** Headers that belong to one hop, never forwarded (RFC 9110 §7.6.1), and Host. */
  static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "proxy-connection",
      "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding",
      "upgrade", "host", "content-length", "expect");
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient http;
  private final HttpUrl base;

  Upstream(String uri) {
    HttpUrl u = HttpUrl.parse(uri);
    if (u == null) {
      throw new IllegalArgumentException("--upstream '" + uri + "' is not an http(s) URL");
    }
    this.base = u;
    // Long reads: a forwarded scan or a large upload may take minutes. A pooled connection the
    // upstream closed while idle is found before anything is sent on it (StaleConnections), so
    // the request can go again on a new one; OkHttp itself retries nothing.
    StaleConnections stale = new StaleConnections(Duration.ofSeconds(2));
    this.http = new OkHttpClient.Builder().connectTimeout(10, TimeUnit.SECONDS)
        .readTimeout(5, TimeUnit.MINUTES).writeTimeout(5, TimeUnit.MINUTES)
        .eventListener(stale.listener()).addNetworkInterceptor(stale.guard())
        .retryOnConnectionFailure(false).followRedirects(false).build();
  }

  /** The caller's headers that go upstream: all but those of the hop. */
  static Headers forwardable(Map<String, List<String>> headers) {
    Headers.Builder b = new Headers.Builder();
    headers.forEach((name, values) -> {
      if (name != null && !HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
        for (String v : values) {
          b.addUnsafeNonAscii(name, v);
        }
      }
    });
    return b.build();
  }

  /**
   * Sends one request upstream and returns its answer, body unread.
   *
   * @param rawPathAndQuery as the caller sent it (still percent-encoded)
   * @param body the caller's body, streamed; {@code null} for none
   * @param length the body's length, or -1 when unknown (sent chunked)
   */
  Response forward(String method, String rawPath, String rawQuery, Headers headers,
      InputStream body, long length) throws IOException {
    HttpUrl url = base.newBuilder().encodedPath(basePath() + rawPath).encodedQuery(rawQuery)
        .build();
    RequestBody rb = body == null ? null : streamed(body, length, headers.get("Content-Type"));
    if (rb == null && (method.equals("POST") || method.equals("PUT")
        || method.equals("PATCH"))) {
      rb = RequestBody.create(new byte[0], null);
    }
    // Without an Accept-Encoding of the caller's, OkHttp would ask for gzip and unpack it,
    // changing the answer's headers on the way.
    Headers sent = headers.get("Accept-Encoding") != null ? headers
        : headers.newBuilder().set("Accept-Encoding", "identity").build();
    Request req = new Request.Builder().url(url).headers(sent).method(method, rb).build();
    return execute(req);
  }

  private Response execute(Request req) throws IOException {
    try {
      return http.newCall(req).execute();
    } catch (StaleConnections.StaleConnectionException stale) {
      return http.newCall(req).execute(); // nothing was sent on the stale connection
    }
  }

  /** Whether a path goes up as it came: no {@code .} or {@code ..} segment, plain or encoded. */
  static boolean plainPath(String rawPath) {
    for (String seg : rawPath.split("/", -1)) {
      String s = seg.toLowerCase(Locale.ROOT).replace("%2e", ".");
      if (s.equals(".") || s.equals("..")) {
        return false;
      }
    }
    return true;
  }

  private String basePath() {
    String p = base.encodedPath();
    return p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
  }

  private static RequestBody streamed(InputStream in, long length, String type) {
    MediaType mt = type == null ? null : MediaType.parse(type);
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return mt;
      }

      @Override
      public long contentLength() {
        return length;
      }

      @Override
      public boolean isOneShot() {
        return true;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        try (Source s = Okio.source(in)) {
          sink.writeAll(s);
        }
      }
    };
  }

  /**
   * A delimiter that no part of {@code id} contains, so that the upstream splits the id as it
   * was meant: the caller's, else the spec's default, else one of the spec's other usual ones.
   */
  static String delimiterFor(List<String> id, String preferred) {
    for (String d : List.of(preferred, "$", ".", "|", "\u001f")) {
      if (id.stream().noneMatch(p -> p.contains(d))) {
        return d;
      }
    }
    throw ServiceError.badRequest("The id " + id + " has parts that contain every delimiter "
        + "this service can send");
  }

  /** The upstream's answer to a check made as the caller. */
  record Check(int status, byte[] body, String contentType, String wwwAuthenticate) {
    boolean ok() {
      return status / 100 == 2;
    }
  }

  /**
   * {@code POST /v1/<kind>/<id>/describe} with the caller's headers: whether the caller may see
   * the object. The id's parts are joined with {@code delimiter}.
   */
  Check describeAs(Headers caller, String kind, List<String> id, String delimiter) {
    return postAs(caller, kind, id, "describe", "", delimiter);
  }

  /**
   * What a write check found: the caller may write; is not authenticated (the upstream's 401,
   * passed on so that a client refreshes its token); is refused (403); the upstream failed
   * (5xx, 429); or the upstream answered something that says neither (no such route, ...).
   */
  enum Write { ALLOWED, UNAUTHENTICATED, REFUSED, FAILED, UNANSWERED }

  /** A write check's finding and the upstream's answer. */
  record WriteCheck(Write answer, Check upstream) {
    int status() {
      return upstream.status();
    }
  }

  /**
   * {@code POST /v1/namespace/<id>/create} with mode {@code ExistOk} and the caller's headers:
   * whether the upstream lets the caller create namespace {@code namespace}, the nearest the
   * spec comes to asking whether it may write there. Where the namespace exists (the service
   * described it first) the spec has the upstream keep it as it is. Decided by the status
   * first: 2xx and 409 allow; a 400 allows only when its error says the namespace already
   * exists (an upstream that ignores the mode, past its permission check); 401 and 403 never
   * allow, whatever their body says.
   */
  WriteCheck mayWriteAs(Headers caller, List<String> namespace, String delimiter) {
    Check c = postAs(caller, "namespace", namespace, "create", ",\"mode\":\"ExistOk\"",
        delimiter);
    int s = c.status();
    Write w;
    if (c.ok() || s == 409) {
      w = Write.ALLOWED;
    } else if (s == 401) {
      w = Write.UNAUTHENTICATED;
    } else if (s == 403) {
      w = Write.REFUSED;
    } else if (s == 400) {
      boolean exists = new String(c.body(), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT)
          .contains("already exists") || ErrorClassifier.classify(Operation.CREATE_NAMESPACE,
              String.join(".", namespace), s, null, c.body()) instanceof AlreadyExistsException;
      w = exists ? Write.ALLOWED : Write.UNANSWERED;
    } else if (s >= 500 || s == 429) {
      w = Write.FAILED;
    } else {
      w = Write.UNANSWERED;
    }
    return new WriteCheck(w, c);
  }

  /** {@code POST /v1/<kind>/<id>/<op>} of {@code {"id": id<more>}} with the caller's headers. */
  private Check postAs(Headers caller, String kind, List<String> id, String op, String more,
      String delimiter) {
    delimiter = delimiterFor(id, delimiter);
    HttpUrl.Builder u = base.newBuilder().addPathSegment("v1").addPathSegment(kind)
        .addPathSegment(id.isEmpty() ? delimiter : String.join(delimiter, id))
        .addPathSegment(op);
    if (!"$".equals(delimiter)) {
      u.addQueryParameter("delimiter", delimiter);
    }
    String json = "{\"id\":" + io.lancerest.client.LanceJson.mapper().valueToTree(id) + more
        + "}";
    // Without the caller's Accept-Encoding the body comes back plain, as it is passed on.
    Request req = new Request.Builder().url(u.build())
        .headers(caller.newBuilder().removeAll("Accept-Encoding").build())
        .header("Content-Type", "application/json")
        .post(RequestBody.create(json.getBytes(StandardCharsets.UTF_8), JSON)).build();
    try (Response r = execute(req)) {
      byte[] b = r.body() == null ? new byte[0] : r.body().bytes();
      return new Check(r.code(), b, r.header("Content-Type"), r.header("WWW-Authenticate"));
    } catch (IOException e) {
      throw new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The upstream namespace at "
          + display() + " cannot be reached: " + e.getClass().getSimpleName(), 5, e);
    }
  }

  /** The upstream as logs and errors show it: no user info, no query. */
  String display() {
    return base.scheme() + "://" + base.host() + ":" + base.port() + base.encodedPath();
  }

  @Override
  public void close() {
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }
}
