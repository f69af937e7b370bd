package io.lancerest.spark.catalog;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceJson;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.spark.catalog.shared.Detached;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fresh vended storage credentials for executors, from the driver, without the catalog's own
 * secret (token, API key, OAuth2 client secret) ever leaving the driver.
 *
 * <p>On a server that requires authentication, executors cannot ask the server for new
 * credentials themselves. This relay is a small HTTP endpoint of the driver that answers the one
 * call lance-core makes to refresh them: the REST namespace's DescribeTable ({@code POST
 * /v1/table/{id}/describe}). It asks the server with the catalog's client (so with its token)
 * and returns only the table's location and storage options. Executors reach it through
 * lance-core's own {@code rest} namespace client, whose properties the catalog ships with each
 * table: the relay's URI and a grant header.
 *
 * <p>A grant is an HMAC of the table's identifier under a key that exists only in this driver's
 * memory: it lets its holder fetch the credentials of that one table, from this driver, while the
 * catalog lives. It is not the catalog's secret, and a grant for one table does not open another.
 * The relay serves no other operation.
 */
public final class CredentialRelay implements AutoCloseable {
  /** The header that carries a table's grant. Not named like a secret header on purpose:
   * executors need it, and {@link io.lancerest.client.RestClientConfig#isSecretHeader} names
   * what must never reach them. */
  public static final String GRANT_HEADER = "x-lancerest-relay-grant";
  private static final Logger LOG = LoggerFactory.getLogger(CredentialRelay.class);
  private static final String PREFIX = "/v1/table/";
  private static final String SUFFIX = "/describe";
  /** How long starting the relay's server may take (binding a port, starting its threads). */
  private static final java.time.Duration START_WAIT = java.time.Duration.ofSeconds(30);

  private final LanceRestClient client;
  private final String catalogName;
  private final byte[] key = new byte[32];
  private final HttpServer server;
  private final ExecutorService threads;
  private final String uri;
  private final java.util.concurrent.ConcurrentHashMap<List<String>, Answer> answers =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final AtomicLong served = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  private CredentialRelay(LanceRestClient client, String catalogName, HttpServer server,
      ExecutorService threads, String advertisedHost) {
    this.client = client;
    this.catalogName = catalogName;
    new SecureRandom().nextBytes(key);
    this.server = server;
    this.threads = threads;
    this.uri = "http://" + bracketed(advertisedHost) + ":" + server.getAddress().getPort();
  }

  /**
   * Starts the relay on {@code bindHost:port} ({@code port} 0: any free one). Executors reach it
   * at {@code advertisedHost}, which must be an address of this machine they can connect to
   * (Spark's {@code spark.driver.host}).
   */
  public static CredentialRelay start(LanceRestClient client, String catalogName,
      String bindHost, String advertisedHost, int port) {
    // The JDK's server starts threads of its own (an idle-connection timer among them) that
    // would keep the starting thread's locals: a Spark session's, whose catalog the relay
    // outlives. A thread without them starts it.
    return Detached.call("lancerest-credential-relay-" + catalogName + "-start", START_WAIT,
        () -> startHere(client, catalogName, bindHost, advertisedHost, port));
  }

  private static CredentialRelay startHere(LanceRestClient client, String catalogName,
      String bindHost, String advertisedHost, int port) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(bindHost, port), 64);
    } catch (IOException e) {
      throw new UncheckedIOException("Catalog " + catalogName + ": cannot start the credential "
          + "relay for executors on " + bindHost + ":" + port + " (" + e.getMessage() + "); set "
          + "spark.sql.catalog." + catalogName + "." + CatalogOptions.RELAY_PORT + " to a free "
          + "port, or " + CatalogOptions.RELAY_ENABLED + "=false to ship only the credentials "
          + "vended at planning", e);
    }
    AtomicInteger n = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(4, r -> {
      // Started by the relay's first requests: without those threads' locals either.
      Thread t = new Thread(null, r, "lancerest-credential-relay-" + catalogName + "-"
          + n.incrementAndGet(), 0, false);
      t.setDaemon(true);
      return t;
    });
    CredentialRelay relay = new CredentialRelay(client, catalogName, server, threads,
        advertisedHost);
    server.setExecutor(threads);
    server.createContext("/", relay::handle);
    server.start();
    LOG.info("Catalog {}: credential relay for executors at {}", catalogName, relay.uri);
    return relay;
  }

  /** Where executors reach the relay. */
  public String uri() {
    return uri;
  }

  /** DescribeTable calls answered, and refused (bad grant, unknown path). */
  public long served() {
    return served.get();
  }

  public long refused() {
    return refused.get();
  }

  /**
   * The namespace properties executors get for table {@code id}: lance-core's {@code rest}
   * client pointed at this relay, with the table's grant.
   */
  public Map<String, String> executorProperties(List<String> id) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("uri", uri);
    p.put("delimiter", client.delimiter());
    p.put("header." + GRANT_HEADER, grant(id));
    return Map.copyOf(p);
  }

  String grant(List<String> id) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      byte[] sig = mac.doFinal(String.join("\u0000", id).getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(sig);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex; InputStream body = ex.getRequestBody()) {
      body.readNBytes(64 * 1024); // DescribeTable's body is small; the id is in the path
      String path = ex.getRequestURI().getRawPath();
      if (!"POST".equals(ex.getRequestMethod()) || !path.startsWith(PREFIX)
          || !path.endsWith(SUFFIX) || path.length() <= PREFIX.length() + SUFFIX.length()) {
        refused.incrementAndGet();
        reply(ex, 404, error("The credential relay of catalog " + catalogName + " answers only "
            + "DescribeTable (POST /v1/table/{id}/describe), not " + ex.getRequestMethod() + " "
            + path, 404));
        return;
      }
      String raw = path.substring(PREFIX.length(), path.length() - SUFFIX.length());
      List<String> id = Arrays.asList(URLDecoder.decode(raw, StandardCharsets.UTF_8)
          .split(java.util.regex.Pattern.quote(client.delimiter()), -1));
      String given = ex.getRequestHeaders().getFirst(GRANT_HEADER);
      if (given == null || !MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8),
          grant(id).getBytes(StandardCharsets.UTF_8))) {
        refused.incrementAndGet();
        LOG.warn("Catalog {}: credential relay refused a request for table {} from {}: {}",
            catalogName, Identifiers.display(id), ex.getRemoteAddress(),
            given == null ? "no grant" : "a grant for another table or another driver");
        reply(ex, 403, error("No valid grant for table " + Identifiers.display(id) + " on the "
            + "credential relay of catalog " + catalogName, 403));
        return;
      }
      Answer cached = answers.get(id);
      if (cached != null && cached.freshEnough()) {
        served.incrementAndGet();
        reply(ex, 200, cached.json());
        return;
      }
      DescribeTableResponse d;
      try {
        d = client.describeTable(new DescribeTableRequest().id(id).vendCredentials(true));
      } catch (NotFoundException e) {
        reply(ex, 404, error(e.getMessage(), 404));
        return;
      } catch (RuntimeException e) {
        LOG.warn("Catalog {}: credential relay could not describe table {}: {}", catalogName,
            Identifiers.display(id), e.getMessage());
        reply(ex, 502, error("The credential relay of catalog " + catalogName + " could not "
            + "describe table " + Identifiers.display(id) + ": " + e.getMessage(), 502));
        return;
      }
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("location", d.getLocation());
      out.put("storage_options", d.getStorageOptions() == null ? Map.of() : d.getStorageOptions());
      // What decides how lance-core opens the table, passed on as the server said it.
      if (d.getManagedVersioning() != null) {
        out.put("managed_versioning", d.getManagedVersioning());
      }
      if (d.getVersion() != null) {
        out.put("version", d.getVersion());
      }
      byte[] json = LanceJson.mapper().writeValueAsBytes(out);
      Long expires = io.lancerest.spark.connector.CredentialRefresh.expiresAt(d.getStorageOptions());
      if (expires != null) {
        answers.put(id, new Answer(json, System.currentTimeMillis(), expires));
      }
      served.incrementAndGet();
      LOG.debug("Catalog {}: credential relay described table {}", catalogName,
          Identifiers.display(id));
      reply(ex, 200, json);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Catalog {}: credential relay request failed: {}", catalogName, e.toString());
    }
  }

  /**
   * A table's last answer. Every task renews at about the same time (they share the expiry):
   * they get the same fresh credentials, not one vend each, while more than half of their
   * lifetime is left.
   */
  private record Answer(byte[] json, long fetchedAt, long expiresAt) {
    boolean freshEnough() {
      long now = System.currentTimeMillis();
      return expiresAt - now > (expiresAt - fetchedAt) / 2;
    }
  }

  private static byte[] error(String message, int code) throws IOException {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("error", message);
    e.put("code", code);
    return LanceJson.mapper().writeValueAsBytes(e);
  }

  private static void reply(HttpExchange ex, int status, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }

  private static String bracketed(String host) {
    return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
    answers.clear();
    Arrays.fill(key, (byte) 0);
  }
}
