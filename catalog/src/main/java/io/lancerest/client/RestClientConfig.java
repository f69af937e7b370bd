package io.lancerest.client;

import io.lancerest.client.auth.Secret;
import io.lancerest.client.error.ClientConfigException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Options of the REST client, read from a flat string map (Spark catalog options, CLI flags).
 * Every option is documented in {@code docs/configuration.md}; unknown options of the client's
 * own prefixes are rejected so that typos do not pass silently.
 */
public final class RestClientConfig {
  public static final String URI = "uri";
  public static final String DELIMITER = "delimiter";
  public static final String HEADER_PREFIX = "header.";
  public static final String TOKEN = "token";
  public static final String API_KEY = "api_key";
  public static final String OAUTH2_CREDENTIAL = "oauth2.credential";
  public static final String OAUTH2_CLIENT_ID = "oauth2.client-id";
  public static final String OAUTH2_CLIENT_SECRET = "oauth2.client-secret";
  public static final String OAUTH2_TOKEN_URI = "oauth2.token-uri";
  public static final String OAUTH2_SCOPE = "oauth2.scope";
  public static final String TLS_CA_FILE = "tls.ca-file";
  public static final String PROXY = "proxy";
  public static final String CONNECT_TIMEOUT_MS = "connect-timeout-ms";
  public static final String READ_TIMEOUT_MS = "read-timeout-ms";
  public static final String CALL_TIMEOUT_MS = "call-timeout-ms";
  public static final String RETRY_MAX_ATTEMPTS = "retry.max-attempts";
  public static final String RETRY_INITIAL_BACKOFF_MS = "retry.initial-backoff-ms";
  public static final String RETRY_MAX_BACKOFF_MS = "retry.max-backoff-ms";
  public static final String POOL_KEEP_ALIVE_MS = "pool.keep-alive-ms";
  /**
   * Default idle time after which a pooled connection is closed. Below the idle timeouts of
   * common servers (uvicorn and Node.js close after 5 s, Tomcat 20 s, load balancers 60 s), so
   * that the client, not the server, closes an idle connection: a request written onto a
   * connection the server has just closed fails with an outcome the client cannot know.
   */
  public static final long DEFAULT_KEEP_ALIVE_MS = 4_000;

  /** Options this class reads; anything else under its prefixes is a typo. */
  public static final Set<String> KNOWN = Set.of(
      URI, DELIMITER, TOKEN, API_KEY, OAUTH2_CREDENTIAL, OAUTH2_CLIENT_ID, OAUTH2_CLIENT_SECRET,
      OAUTH2_TOKEN_URI, OAUTH2_SCOPE, TLS_CA_FILE, PROXY, CONNECT_TIMEOUT_MS, READ_TIMEOUT_MS,
      CALL_TIMEOUT_MS, RETRY_MAX_ATTEMPTS, RETRY_INITIAL_BACKOFF_MS, RETRY_MAX_BACKOFF_MS,
      POOL_KEEP_ALIVE_MS);

  private final URI uri;
  private final String delimiter;
  private final Map<String, String> headers;
  private final Secret token;
  private final Secret apiKey;
  private final String oauth2ClientId;
  private final Secret oauth2ClientSecret;
  private final URI oauth2TokenUri;
  private final String oauth2Scope;
  private final Path tlsCaFile;
  private final URI proxy;
  private final Duration connectTimeout;
  private final Duration readTimeout;
  private final Duration callTimeout;
  private final int retryMaxAttempts;
  private final Duration retryInitialBackoff;
  private final Duration retryMaxBackoff;
  private final Duration keepAlive;

  /** Prefixes that belong to this client alone: an unknown option under them is a typo. */
  private static final List<String> OWN_PREFIXES = List.of("retry.", "oauth2.", "tls.", "pool.");
  private static final int MAX_ATTEMPTS_LIMIT = 100;

  private RestClientConfig(Map<String, String> options, Map<String, String> env) {
    rejectUnknown(options);
    String rawUri = options.get(URI);
    if (rawUri == null || rawUri.isBlank()) {
      throw new ClientConfigException(
          "Option 'uri' is required: the base URL of the Lance REST namespace server, "
              + "e.g. http://localhost:2333");
    }
    this.uri = parseUri(URI, stripTrailingSlash(rawUri.trim()));
    if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
      throw new ClientConfigException(
          "Option 'uri' must be an http:// or https:// URL, got '" + rawUri + "'");
    }
    this.delimiter = options.getOrDefault(DELIMITER, "$");
    if (delimiter.isEmpty()) {
      throw new ClientConfigException("Option 'delimiter' must not be empty (default is '$')");
    }
    Map<String, String> hs = new LinkedHashMap<>();
    options.forEach((k, v) -> {
      if (k.startsWith(HEADER_PREFIX) && k.length() > HEADER_PREFIX.length()) {
        hs.put(k.substring(HEADER_PREFIX.length()), v);
      }
    });
    this.headers = Map.copyOf(hs);
    this.token = Secret.resolve(TOKEN, options.get(TOKEN), env);
    this.apiKey = Secret.resolve(API_KEY, options.get(API_KEY), env);

    Secret credential = Secret.resolve(OAUTH2_CREDENTIAL, options.get(OAUTH2_CREDENTIAL), env);
    String clientId = options.get(OAUTH2_CLIENT_ID);
    Secret clientSecret =
        Secret.resolve(OAUTH2_CLIENT_SECRET, options.get(OAUTH2_CLIENT_SECRET), env);
    if (credential != null) {
      String c = credential.reveal();
      int colon = c.indexOf(':');
      if (colon <= 0) {
        throw new ClientConfigException(
            "Option 'oauth2.credential' must be '<client_id>:<client_secret>'");
      }
      clientId = c.substring(0, colon);
      clientSecret = Secret.of(c.substring(colon + 1));
    }
    if ((clientId == null) != (clientSecret == null)) {
      throw new ClientConfigException(
          "OAuth2 needs both a client id and a client secret: set 'oauth2.credential' "
              + "(id:secret) or both 'oauth2.client-id' and 'oauth2.client-secret'");
    }
    int authKinds = (token != null ? 1 : 0) + (clientId != null ? 1 : 0);
    if (authKinds > 1) {
      throw new ClientConfigException(
          "Options 'token' and 'oauth2.*' both configure the bearer token; set only one");
    }
    this.oauth2ClientId = clientId;
    this.oauth2ClientSecret = clientSecret;
    String tokenUri = options.get(OAUTH2_TOKEN_URI);
    this.oauth2TokenUri = tokenUri != null
        ? parseUri(OAUTH2_TOKEN_URI, tokenUri)
        : java.net.URI.create(uri + "/oauth/token");
    this.oauth2Scope = options.get(OAUTH2_SCOPE);
    this.tlsCaFile = options.containsKey(TLS_CA_FILE) ? Path.of(options.get(TLS_CA_FILE)) : null;
    if (tlsCaFile != null && !tlsCaFile.toFile().canRead()) {
      throw new ClientConfigException(
          "Option 'tls.ca-file' names '" + tlsCaFile + "', which is not a readable file");
    }
    this.proxy = options.containsKey(PROXY) ? parseUri(PROXY, options.get(PROXY)) : null;
    if (proxy != null && (proxy.getHost() == null || proxy.getPort() < 0)) {
      throw new ClientConfigException(
          "Option 'proxy' must be 'http://host:port', got '" + options.get(PROXY) + "'");
    }
    // OkHttp takes timeouts as int milliseconds and refuses larger ones with its own error.
    this.connectTimeout = Duration.ofMillis(
        atMost(CONNECT_TIMEOUT_MS, positiveLong(options, CONNECT_TIMEOUT_MS, 10_000),
            Integer.MAX_VALUE));
    this.readTimeout = Duration.ofMillis(
        atMost(READ_TIMEOUT_MS, positiveLong(options, READ_TIMEOUT_MS, 60_000),
            Integer.MAX_VALUE));
    this.callTimeout = Duration.ofMillis(
        atMost(CALL_TIMEOUT_MS, nonNegativeLong(options, CALL_TIMEOUT_MS, 0), Integer.MAX_VALUE));
    this.retryMaxAttempts = (int) atMost(RETRY_MAX_ATTEMPTS,
        positiveLong(options, RETRY_MAX_ATTEMPTS, 5), MAX_ATTEMPTS_LIMIT);
    this.retryInitialBackoff =
        Duration.ofMillis(nonNegativeLong(options, RETRY_INITIAL_BACKOFF_MS, 100));
    this.retryMaxBackoff = Duration.ofMillis(nonNegativeLong(options, RETRY_MAX_BACKOFF_MS, 10_000));
    this.keepAlive = Duration.ofMillis(
        positiveLong(options, POOL_KEEP_ALIVE_MS, DEFAULT_KEEP_ALIVE_MS));
  }

  /** Reads options; secrets given as {@code env:VAR} are resolved from the process environment. */
  public static RestClientConfig fromProperties(Map<String, String> options) {
    return fromProperties(options, System.getenv());
  }

  public static RestClientConfig fromProperties(
      Map<String, String> options, Map<String, String> env) {
    return new RestClientConfig(options, env);
  }

  private static void rejectUnknown(Map<String, String> options) {
    for (String key : options.keySet()) {
      for (String prefix : OWN_PREFIXES) {
        if (key.startsWith(prefix) && !KNOWN.contains(key)) {
          throw new ClientConfigException("Unknown option '" + key + "': options starting with '"
              + prefix + "' are " + new java.util.TreeSet<>(KNOWN.stream()
                  .filter(k -> k.startsWith(prefix)).toList()));
        }
      }
    }
  }

  private static long atMost(String key, long value, long max) {
    if (value > max) {
      throw new ClientConfigException("Option '" + key + "' must be at most " + max + ", got "
          + value);
    }
    return value;
  }

  private static String stripTrailingSlash(String s) {
    return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
  }

  private static URI parseUri(String option, String value) {
    try {
      return new URI(value);
    } catch (Exception e) {
      throw new ClientConfigException(
          "Option '" + option + "' is not a valid URL: '" + value + "'", e);
    }
  }

  private static long positiveLong(Map<String, String> options, String key, long dflt) {
    long v = nonNegativeLong(options, key, dflt);
    if (v == 0) {
      throw new ClientConfigException("Option '" + key + "' must be greater than 0");
    }
    return v;
  }

  private static long nonNegativeLong(Map<String, String> options, String key, long dflt) {
    String raw = options.get(key);
    if (raw == null) {
      return dflt;
    }
    try {
      long v = Long.parseLong(raw.trim());
      if (v < 0) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new ClientConfigException(
          "Option '" + key + "' must be a non-negative whole number, got '" + raw + "'");
    }
  }

  public URI uri() {
    return uri;
  }

  public String delimiter() {
    return delimiter;
  }

  /** Static headers from {@code header.<Name>} options. */
  public Map<String, String> headers() {
    return headers;
  }

  public Secret token() {
    return token;
  }

  public Secret apiKey() {
    return apiKey;
  }

  public boolean oauth2Enabled() {
    return oauth2ClientId != null;
  }

  public String oauth2ClientId() {
    return oauth2ClientId;
  }

  public Secret oauth2ClientSecret() {
    return oauth2ClientSecret;
  }

  public URI oauth2TokenUri() {
    return oauth2TokenUri;
  }

  public String oauth2Scope() {
    return oauth2Scope;
  }

  public Path tlsCaFile() {
    return tlsCaFile;
  }

  public URI proxy() {
    return proxy;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public Duration readTimeout() {
    return readTimeout;
  }

  /** Whole-call timeout; zero means none. */
  public Duration callTimeout() {
    return callTimeout;
  }

  public int retryMaxAttempts() {
    return retryMaxAttempts;
  }

  public Duration retryInitialBackoff() {
    return retryInitialBackoff;
  }

  /** How long an idle pooled connection is kept for reuse ({@code pool.keep-alive-ms}). */
  public Duration keepAlive() {
    return keepAlive;
  }

  public Duration retryMaxBackoff() {
    return retryMaxBackoff;
  }

  /** Header names whose values are secrets, lower case. */
  public static final Set<String> SECRET_HEADERS =
      Set.of("authorization", "x-api-key", "cookie", "proxy-authorization");

  /** True when a header value must never be shown. */
  public static boolean isSecretHeader(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return SECRET_HEADERS.contains(n) || n.contains("token") || n.contains("secret")
        || n.contains("key") || n.contains("credential") || n.contains("password");
  }

  @Override
  public String toString() {
    Map<String, String> shown = new TreeMap<>();
    headers.forEach((k, v) -> shown.put(k, isSecretHeader(k) ? "****" : v));
    return "RestClientConfig{uri=" + uri + ", delimiter=" + delimiter + ", headers=" + shown
        + ", token=" + (token == null ? "none" : token) + ", apiKey="
        + (apiKey == null ? "none" : apiKey) + ", oauth2="
        + (oauth2Enabled() ? "client " + oauth2ClientId + " @ " + oauth2TokenUri : "none")
        + ", retryMaxAttempts=" + retryMaxAttempts + '}';
  }
}
