package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.RestClientConfig;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.connector.TableHandle;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Describes tables through the namespace, cached until their vended credentials near expiry, and
 * turns what the server answers into the connector's {@link TableHandle}.
 */
final class DescribedTables {
  static final String EXECUTOR_NAMESPACE_IMPL = "rest";
  /** A cached table whose credentials expire sooner than this is described again. */
  private static final long EXPIRY_MARGIN_MS = 5_000;

  private final LanceRestClient client;
  private final CatalogOptions options;
  private final TableCache<DescribedTable> cache;
  private final Map<String, String> executorNamespace;
  /** The driver's credential relay, started on first need; null when it is disabled. */
  private final Supplier<CredentialRelay> relay;

  DescribedTables(LanceRestClient client, CatalogOptions options,
      Supplier<CredentialRelay> relay) {
    this.client = client;
    this.options = options;
    this.cache = new TableCache<>(options.cacheTtl());
    this.executorNamespace = executorNamespaceProperties(client.config());
    this.relay = options.relayEnabled() ? relay : null;
  }

  /**
   * Whether the client authenticates: then executors, which never get its secrets, cannot ask
   * the server for fresh credentials themselves.
   */
  private static boolean authenticated(RestClientConfig c) {
    return c.token() != null || c.apiKey() != null || c.oauth2Enabled()
        || c.headers().keySet().stream().anyMatch(RestClientConfig::isSecretHeader);
  }

  /**
   * What executors get to rebuild the namespace client for credential refresh: the URI, the
   * delimiter and the static headers that are not secrets. Tokens, API keys, OAuth2 secrets and
   * secret-looking headers are never shipped, because task descriptions are serialised to every
   * executor and can be dumped in plain text.
   */
  static Map<String, String> executorNamespaceProperties(RestClientConfig config) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("uri", config.uri().toString());
    props.put("delimiter", config.delimiter());
    config.headers().forEach((k, v) -> {
      if (!RestClientConfig.isSecretHeader(k)) {
        props.put(RestClientConfig.HEADER_PREFIX + k, v);
      }
    });
    return Map.copyOf(props);
  }

  TableCache<DescribedTable> cache() {
    return cache;
  }

  /** The table is described afresh on next use (it changed, or may have). */
  void invalidate(List<String> id) {
    cache.invalidate(id);
  }

  /** The cached entry, or a fresh DescribeTable. Throws the client's NotFoundException. */
  DescribedTable describe(List<String> id) {
    DescribedTable e = cache.get(id);
    Long expires = e == null ? null : CredentialRefresh.expiresAt(e.handle.storageOptions());
    if (e != null && (expires == null
        || expires - System.currentTimeMillis() > EXPIRY_MARGIN_MS)) {
      return e;
    }
    e = describeFresh(id);
    cache.put(id, e);
    return e;
  }

  DescribedTable describeFresh(List<String> id) {
    DescribeTableResponse d =
        client.describeTable(new DescribeTableRequest().id(id).vendCredentials(true));
    if (d.getLocation() == null || d.getLocation().isBlank()) {
      throw new IllegalStateException("The server described table " + Identifiers.display(id)
          + " without a location; the catalog cannot read it");
    }
    if (!isAbsolute(d.getLocation())) {
      // A relative location would resolve against the driver's working directory.
      throw new IllegalStateException("The server described table " + Identifiers.display(id)
          + " with location '" + d.getLocation() + "', which is neither an absolute URI nor an "
          + "absolute path; the catalog cannot read it. Check the server's answer");
    }
    return new DescribedTable(d, handle(id, d.getLocation(), d.getStorageOptions(),
        Boolean.TRUE.equals(d.getManagedVersioning()), d.getProperties()));
  }

  private static boolean isAbsolute(String location) {
    if (location.startsWith("/")) {
      return true;
    }
    try {
      return new java.net.URI(location).isAbsolute();
    } catch (java.net.URISyntaxException e) {
      return false;
    }
  }

  boolean exists(List<String> id) {
    try {
      describe(id);
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  TableHandle handle(List<String> id, String location, Map<String, String> vended,
      boolean managed, Map<String, String> serverProps) {
    // The catalog's storage.* options are defaults; what the server vends for this table wins.
    Map<String, String> storage = storage(vended);
    Map<String, String> ns = executorNamespace(id, vended);
    return TableHandle.builder(id, location)
        .storageOptions(storage)
        .managedVersioning(managed)
        .properties(serverProps == null ? Map.of() : serverProps)
        // Managed-versioning tables always need their namespace (only it knows their versions).
        .namespace(ns == null && !managed ? null : EXECUTOR_NAMESPACE_IMPL,
            ns == null ? executorNamespace : ns)
        .scanBatchRows(options.readBatchSize())
        .build();
  }

  /**
   * The storage options of a table: the catalog's {@code storage.*} with what the server vended
   * over them, and, when the vended credentials expire, how long before expiry lance-core renews
   * them.
   */
  Map<String, String> storage(Map<String, String> vended) {
    Map<String, String> storage = new LinkedHashMap<>(options.storageOptions());
    if (vended != null) {
      storage.putAll(CredentialRefresh.withRefreshOffset(vended));
    }
    return storage;
  }

  /**
   * The namespace client executors renew table {@code id}'s expiring credentials with: the
   * server itself, or, when it wants a secret they never get, the driver's relay.
   */
  Map<String, String> executorNamespace(List<String> id, Map<String, String> vended) {
    if (CredentialRefresh.expiresAt(vended) == null || !authenticated(client.config())) {
      return executorNamespace;
    }
    // null: no route works (the relay is off, and the server wants a secret executors never
    // get); Lance uses the credentials vended at planning until they expire.
    return relay == null ? null : relay.get().executorProperties(id);
  }
}
