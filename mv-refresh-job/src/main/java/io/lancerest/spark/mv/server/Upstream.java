package io.lancerest.spark.mv.server;

import io.lancerest.client.error.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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
    // Long reads: a forwarded scan or a large upload may take minutes.
    this.http = new OkHttpClient.Builder().connectTimeout(10, TimeUnit.SECONDS)
        .readTimeout(5, TimeUnit.MINUTES).writeTimeout(5, TimeUnit.MINUTES)
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
  Response forward(String method, String rawPathAndQuery, Headers headers, InputStream body,
      long length) throws IOException {
    HttpUrl url = HttpUrl.parse(base.scheme() + "://" + base.host() + ":" + base.port()
        + basePath() + rawPathAndQuery);
    if (url == null) {
      throw new IOException("cannot forward " + rawPathAndQuery);
    }
    RequestBody rb = body == null ? null : streamed(body, length, headers.get("Content-Type"));
    if (rb == null && (method.equals("POST") || method.equals("PUT")
        || method.equals("PATCH"))) {
      rb = RequestBody.create(new byte[0], null);
    }
    return http.newCall(new Request.Builder().url(url).headers(headers).method(method, rb)
        .build()).execute();
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

  /** The upstream's answer to a check made as the caller. */
  record Check(int status, byte[] body, String contentType) {
    boolean ok() {
      return status / 100 == 2;
    }
  }

  /**
   * {@code POST /v1/<kind>/<id>/describe} with the caller's headers: whether the caller may see
   * the object. The id's parts are joined with {@code delimiter}.
   */
  Check describeAs(Headers caller, String kind, List<String> id, String delimiter) {
    HttpUrl.Builder u = base.newBuilder().addPathSegment("v1").addPathSegment(kind)
        .addPathSegment(id.isEmpty() ? delimiter : String.join(delimiter, id))
        .addPathSegment("describe");
    if (!"$".equals(delimiter)) {
      u.addQueryParameter("delimiter", delimiter);
    }
    String json = "{\"id\":" + io.lancerest.client.LanceJson.mapper().valueToTree(id) + "}";
    // Without the caller's Accept-Encoding the body comes back plain, as it is passed on.
    Request req = new Request.Builder().url(u.build())
        .headers(caller.newBuilder().removeAll("Accept-Encoding").build())
        .header("Content-Type", "application/json")
        .post(RequestBody.create(json.getBytes(StandardCharsets.UTF_8), JSON)).build();
    try (Response r = http.newCall(req).execute()) {
      byte[] b = r.body() == null ? new byte[0] : r.body().bytes();
      return new Check(r.code(), b, r.header("Content-Type"));
    } catch (IOException e) {
      throw new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The upstream namespace at "
          + base + " cannot be reached: " + e.getMessage(), 5, e);
    }
  }

  @Override
  public void close() {
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }
}
