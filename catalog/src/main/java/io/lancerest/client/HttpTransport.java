package io.lancerest.client;

import io.lancerest.client.auth.AuthManager;
import io.lancerest.client.auth.OAuth2ClientCredentials;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.error.CommunicationException;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.UnauthenticatedException;
import io.lancerest.client.internal.ErrorClassifier;
import io.lancerest.client.internal.Interceptors;
import io.lancerest.client.internal.RetryPolicy;
import io.lancerest.client.internal.StaleConnections;
import io.lancerest.client.spec.Operation;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.ConnectionPool;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Sends {@link RestRequest}s over one pooled OkHttp client. Retry, authentication, static headers
 * and logging are interceptors; this class only builds URLs and turns answers into
 * {@link RestResponse} or a typed exception.
 */
public final class HttpTransport implements Closeable {
  static final String USER_AGENT = "lance-rest-spark/" + Version.VERSION + " (Java "
      + System.getProperty("java.version") + ")";
  private static final byte[] EMPTY = new byte[0];
  // Every POST route of the spec takes a JSON body, and some servers reject a missing one.
  private static final byte[] EMPTY_JSON = "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8);

  private final RestClientConfig config;
  private final OkHttpClient http;
  private final HttpUrl base;
  private final AuthManager auth;
  private final String encodedDelimiter;
  /** The transport whose connections this view uses, or null when they are its own. */
  private final HttpTransport owner;
  private volatile boolean closed;
  /**
   * Pooled connections idle this long are probed before use (a few ms of idleness cannot have
   * met a server's idle timeout; probing costs up to 1 ms).
   */
  static final Duration STALE_CHECK_AFTER_IDLE = Duration.ofSeconds(1);

  /** Each route's path template split into segments, once (URL building is per call). */
  private static final Map<Operation, String[]> SEGMENTS = new EnumMap<>(Operation.class);

  static {
    for (Operation op : Operation.values()) {
      SEGMENTS.put(op, op.pathTemplate().substring(1).split("/"));
    }
  }

  public HttpTransport(RestClientConfig config) {
    this(config, Interceptors.Sleeper.REAL, Clock.systemUTC());
  }

  public HttpTransport(RestClientConfig config, Interceptors.Sleeper sleeper, Clock clock) {
    this.config = config;
    HttpUrl parsed = HttpUrl.parse(config.uri().toString());
    if (parsed == null) {
      throw new ClientConfigException("Option 'uri' is not a valid URL: " + config.uri());
    }
    this.base = parsed;
    this.encodedDelimiter = new HttpUrl.Builder().scheme("http").host("h")
        .addQueryParameter("d", config.delimiter()).build().encodedQuery().substring(2);
    StaleConnections stale = new StaleConnections(STALE_CHECK_AFTER_IDLE);
    OkHttpClient.Builder b = new OkHttpClient.Builder()
        .connectTimeout(config.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .readTimeout(config.readTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .writeTimeout(config.readTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .callTimeout(config.callTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .connectionPool(
            new ConnectionPool(16, config.keepAlive().toMillis(), TimeUnit.MILLISECONDS))
        .eventListener(stale.listener())
        // Retries are decided per operation by our own interceptor, never silently by OkHttp.
        .retryOnConnectionFailure(false)
        .followRedirects(false);
    if (config.proxy() != null) {
      b.proxy(new Proxy(Proxy.Type.HTTP,
          new InetSocketAddress(config.proxy().getHost(), config.proxy().getPort())));
    }
    if (config.tlsCaFile() != null) {
      X509TrustManager tm = trustManagerFor(config);
      b.sslSocketFactory(sslContext(tm).getSocketFactory(), tm);
    }
    OkHttpClient plain = b.build();
    // Static headers are added by their own interceptor; the API key must survive OAuth2.
    Map<String, String> apiKeyHeader = config.apiKey() == null ? Map.of()
        : Map.of(AuthManager.API_KEY_HEADER, config.apiKey().reveal());
    RetryPolicy policy = new RetryPolicy(config.retryMaxAttempts(), config.retryInitialBackoff(),
        config.retryMaxBackoff(), clock);
    // The token endpoint gets the User-Agent, but none of the catalog's static headers: it may
    // be another host.
    OkHttpClient tokenHttp = plain.newBuilder()
        .addInterceptor(Interceptors.headers(Map.of(), USER_AGENT)).build();
    this.auth = config.oauth2Enabled()
        ? new OAuth2ClientCredentials(tokenHttp, config.oauth2TokenUri(),
            config.oauth2ClientId(), config.oauth2ClientSecret(), config.oauth2Scope(),
            apiKeyHeader, clock, policy, sleeper)
        : AuthManager.fixed(config.token(), config.apiKey());
    this.http = plain.newBuilder()
        .addInterceptor(Interceptors.retry(policy, sleeper))
        .addInterceptor(new io.lancerest.client.auth.AuthInterceptor(auth))
        .addInterceptor(Interceptors.headers(config.headers(), USER_AGENT))
        .addNetworkInterceptor(stale.guard())
        .addNetworkInterceptor(Interceptors.logging())
        .build();
    this.owner = null;
  }

  private HttpTransport(HttpTransport owner) {
    this.config = owner.config;
    this.http = owner.http;
    this.base = owner.base;
    this.auth = owner.auth;
    this.encodedDelimiter = owner.encodedDelimiter;
    this.owner = owner;
  }

  /**
   * A transport over this one's connection pool and authentication that is closed on its own:
   * closing the view stops its calls only; closing this transport stops the view's too.
   */
  public HttpTransport view() {
    return new HttpTransport(owner == null ? this : owner);
  }

  public RestClientConfig config() {
    return config;
  }

  /** The URL a request goes to (exposed for tests and diagnostics; carries no secrets). */
  public HttpUrl urlFor(RestRequest request) {
    HttpUrl.Builder url = base.newBuilder();
    for (String seg : SEGMENTS.get(request.operation())) {
      if (seg.equals("{id}")) {
        String joined = Identifiers.join(request.id(), config.delimiter());
        if (joined.equals(".") || joined.equals("..")) {
          // URL normalisation (OkHttp's, and servers') removes "." and ".." segments, even
          // percent-encoded: the call would silently go to another route.
          throw new ClientConfigException("Identifier " + Identifiers.display(request.id())
              + " would be sent as the path segment '" + joined + "', which URLs cannot carry"
              + (request.id() == null || request.id().isEmpty()
                  ? "; the root namespace needs a 'delimiter' other than '" + joined
                      + "' (the default is '$')"
                  : "; rename it"));
        }
        url.addEncodedPathSegment(Identifiers.encodePathSegment(joined));
      } else if (seg.startsWith("{") && seg.endsWith("}")) {
        String name = seg.substring(1, seg.length() - 1);
        String value = request.pathParams().get(name);
        if (value == null || value.isEmpty()) {
          throw new ClientConfigException(
              request.operation().specName() + " needs a non-empty '" + name + "'");
        }
        url.addEncodedPathSegment(Identifiers.encodePathSegment(value));
      } else {
        url.addEncodedPathSegment(seg); // route words: plain ASCII, nothing to encode
      }
    }
    url.addEncodedQueryParameter("delimiter", encodedDelimiter);
    request.query().forEach(url::addQueryParameter);
    return url.build();
  }

  /** Sends the request; returns the 2xx answer or throws a typed {@code LanceRestException}. */
  public RestResponse execute(RestRequest request) {
    Operation op = request.operation();
    if (isClosed()) {
      // OkHttp would still run a synchronous call on a shut-down client, opening a new pool.
      throw new IllegalStateException("The Lance REST client of " + base.scheme() + "://"
          + base.host() + ":" + base.port() + " is closed (its catalog was closed or its "
          + "SparkContext stopped), so " + op.specName() + " was not sent; use a new session "
          + "or client");
    }
    HttpUrl url = urlFor(request);
    RequestBody body = null;
    if (request.body() != null) {
      body = RequestBody.create(request.body().bytes(), MediaType.get(request.body().mediaType()));
    } else if (op.method().equals("POST")) {
      body = RequestBody.create(EMPTY_JSON, MediaType.get(RestRequest.Body.JSON));
    }
    Request.Builder rb = new Request.Builder().url(url).method(op.method(), body)
        .tag(Operation.class, op);
    request.headers().forEach(rb::header);
    try (Response response = http.newCall(rb.build()).execute()) {
      ResponseBody rbody = response.body();
      byte[] bytes = rbody == null ? EMPTY : rbody.bytes();
      if (response.isSuccessful()) {
        return new RestResponse(response.code(), headersOf(response), bytes);
      }
      throw ErrorClassifier.classify(
          op, display(request), response.code(), requestId(response), bytes, sentSecrets(response));
    } catch (OAuth2ClientCredentials.OAuth2Exception e) {
      // No token, so nothing was sent: the call failed before reaching the server.
      throw new UnauthenticatedException(new ErrorDetails("could not obtain an access token ("
          + e.getMessage() + ")", null, null, 0, op, display(request), null, null), e);
    } catch (IOException e) {
      boolean unknown = !op.isRead() && !(e instanceof java.net.ConnectException)
          && !(e instanceof StaleConnections.StaleConnectionException)
          && !(e instanceof SSLException) && !(e instanceof java.net.UnknownHostException);
      String what = e instanceof SocketTimeoutException ? "timed out"
          : "could not reach the server (" + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")";
      throw new CommunicationException(new ErrorDetails(what,
          unknown ? "The server may or may not have applied this change; re-read the object "
              + "before acting again" : "Check 'uri', the network and the server",
          null, 0, op, display(request), null, null), unknown, e);
    }
  }

  /** The identifier as users write it, for error messages (computed only when one is raised). */
  private static String display(RestRequest request) {
    return request.id() == null ? null : Identifiers.display(request.id());
  }

  private static Map<String, List<String>> headersOf(Response response) {
    Map<String, List<String>> out = new TreeMap<>();
    for (String name : response.headers().names()) {
      out.put(name.toLowerCase(Locale.ROOT), response.headers(name));
    }
    return out;
  }

  /** Credential values of the request as it went on the wire (after the auth interceptor). */
  private static List<String> sentSecrets(Response response) {
    List<String> out = new java.util.ArrayList<>();
    okhttp3.Headers sent = response.request().headers();
    for (String name : sent.names()) {
      if (RestClientConfig.isSecretHeader(name)) {
        for (String v : sent.values(name)) {
          out.add(v);
          int space = v.indexOf(' ');
          if (space > 0) {
            out.add(v.substring(space + 1).trim()); // "Bearer <token>": the token alone
          }
        }
      }
    }
    return out;
  }

  private static String requestId(Response response) {
    for (String h : new String[] {"x-request-id", "request-id", "x-amzn-requestid",
        "x-correlation-id"}) {
      String v = response.header(h);
      if (v != null) {
        return v;
      }
    }
    return null;
  }

  private static X509TrustManager trustManagerFor(RestClientConfig config) {
    try (InputStream in = Files.newInputStream(config.tlsCaFile())) {
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      int i = 0;
      for (Certificate c : cf.generateCertificates(in)) {
        ks.setCertificateEntry("ca-" + i++, c);
      }
      if (i == 0) {
        throw new ClientConfigException(
            "Option 'tls.ca-file' (" + config.tlsCaFile() + ") holds no X.509 certificate");
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      return (X509TrustManager) tmf.getTrustManagers()[0];
    } catch (ClientConfigException e) {
      throw e;
    } catch (Exception e) {
      throw new ClientConfigException("Option 'tls.ca-file' (" + config.tlsCaFile()
          + ") could not be read as PEM certificates: " + e.getMessage(), e);
    }
  }

  private static SSLContext sslContext(X509TrustManager tm) {
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, new javax.net.ssl.TrustManager[] {tm}, null);
      return ctx;
    } catch (Exception e) {
      throw new IllegalStateException("TLS could not be set up", e);
    }
  }

  /** Whether {@link #close} has run (on a view: its own, or its owner's). */
  public boolean isClosed() {
    return closed || owner != null && owner.closed;
  }

  /**
   * Releases the connection pool, the dispatcher and the OAuth2 refresh thread; on a
   * {@link #view}, only stops its calls. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (owner != null) {
      return;
    }
    auth.close();
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }
}
