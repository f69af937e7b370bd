package io.lancerest.spark.catalog;

import io.lancerest.client.RestClientConfig;
import io.lancerest.client.error.ClientConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The catalog's own options ({@code spark.sql.catalog.<name>.*} minus the REST client's), read
 * and checked once at {@code initialize}. Every option is documented in
 * {@code docs/configuration.md}.
 *
 * <p>Unknown keys are rejected rather than ignored: a misspelt {@code cache.ttl-ms} or
 * {@code oauth2.client-secret} would otherwise silently fall back to a default.
 */
public final class CatalogOptions {
  public static final String PARENT = "parent";
  public static final String CACHE_TTL_MS = "cache.ttl-ms";
  public static final String STORAGE_PREFIX = "storage.";
  public static final String TABLE_DEFAULT_PREFIX = "table-default.";
  public static final String MV_MODE = "mv.mode";
  /** Whether executors refresh vended credentials through the driver (authenticated servers). */
  public static final String RELAY_ENABLED = "credential-relay.enabled";
  /** The address executors reach the relay at; default Spark's {@code spark.driver.host}. */
  public static final String RELAY_HOST = "credential-relay.host";
  /** The address the relay listens on; default {@code spark.driver.bindAddress}, else the host. */
  public static final String RELAY_BIND_ADDRESS = "credential-relay.bind-address";
  /** The relay's port; 0 (the default) takes a free one. */
  public static final String RELAY_PORT = "credential-relay.port";

  public static final long DEFAULT_CACHE_TTL_MS = 30_000;
  /** Rows per batch of table scans; without it, sized by each table's columns. */
  public static final String READ_BATCH_SIZE = "read.batch-size";

  private static final Set<String> CATALOG_KEYS = Set.of(PARENT, CACHE_TTL_MS, MV_MODE,
      RELAY_ENABLED, RELAY_HOST, RELAY_BIND_ADDRESS, RELAY_PORT, READ_BATCH_SIZE);
  /** Prefixes with free-form keys below them. */
  private static final List<String> OPEN_PREFIXES =
      List.of(RestClientConfig.HEADER_PREFIX, STORAGE_PREFIX, TABLE_DEFAULT_PREFIX);

  private final Map<String, String> clientOptions;
  private final List<String> parent;
  private final Duration cacheTtl;
  private final Map<String, String> storageOptions;
  private final Map<String, String> tableDefaults;
  private final String mvMode;
  private final boolean relayEnabled;
  private final String relayHost;
  private final String relayBindAddress;
  private final int relayPort;
  private final Integer readBatchSize;

  private CatalogOptions(String catalogName, Map<String, String> options) {
    List<String> unknown = new ArrayList<>();
    for (String key : options.keySet()) {
      if (!RestClientConfig.KNOWN.contains(key) && !CATALOG_KEYS.contains(key)
          && OPEN_PREFIXES.stream().noneMatch(p -> key.startsWith(p) && key.length() > p.length())) {
        unknown.add(key);
      }
    }
    if (!unknown.isEmpty()) {
      Collections.sort(unknown);
      Set<String> known = new TreeSet<>(RestClientConfig.KNOWN);
      known.addAll(CATALOG_KEYS);
      throw new ClientConfigException("Unknown option(s) " + unknown + " for catalog '"
          + catalogName + "' (spark.sql.catalog." + catalogName + ".<option>). Known options: "
          + known + ", plus header.<Name>, storage.<key> and table-default.<key>. "
          + "See docs/configuration.md");
    }
    this.clientOptions = Map.copyOf(options);
    String delimiter = options.getOrDefault(RestClientConfig.DELIMITER, "$");
    this.parent = parseParent(options.get(PARENT), delimiter);
    long ttl = parseTtl(options.get(CACHE_TTL_MS));
    this.cacheTtl = Duration.ofMillis(ttl);
    this.storageOptions = stripPrefix(options, STORAGE_PREFIX);
    this.tableDefaults = stripPrefix(options, TABLE_DEFAULT_PREFIX);
    this.mvMode = options.get(MV_MODE);
    String enabled = options.getOrDefault(RELAY_ENABLED, "true").trim();
    if (!enabled.equalsIgnoreCase("true") && !enabled.equalsIgnoreCase("false")) {
      throw new ClientConfigException("Option '" + RELAY_ENABLED + "' of catalog '" + catalogName
          + "' is true or false, got '" + enabled + "'");
    }
    this.relayEnabled = Boolean.parseBoolean(enabled);
    this.relayHost = blankToNull(options.get(RELAY_HOST));
    this.relayBindAddress = blankToNull(options.get(RELAY_BIND_ADDRESS));
    this.relayPort = parsePort(catalogName, options.get(RELAY_PORT));
    this.readBatchSize = parseBatchSize(catalogName, options.get(READ_BATCH_SIZE));
  }

  private static Integer parseBatchSize(String catalogName, String raw) {
    if (raw == null || raw.isBlank()) {
      return null;
    }
    try {
      int rows = Integer.parseInt(raw.trim());
      if (rows > 0) {
        return rows;
      }
    } catch (NumberFormatException ignored) {
      // falls through to the error below
    }
    throw new ClientConfigException("Option '" + READ_BATCH_SIZE + "' of catalog '"
        + catalogName + "' is a positive number of rows per scan batch (leave it unset to size "
        + "batches by each table's columns), got '" + raw + "'");
  }

  /** {@value #READ_BATCH_SIZE}, or {@code null} to size scan batches by each table's columns. */
  public Integer readBatchSize() {
    return readBatchSize;
  }

  private static String blankToNull(String v) {
    return v == null || v.isBlank() ? null : v.trim();
  }

  private static int parsePort(String catalogName, String raw) {
    if (raw == null || raw.isBlank()) {
      return 0;
    }
    try {
      int p = Integer.parseInt(raw.trim());
      if (p >= 0 && p <= 65535) {
        return p;
      }
    } catch (NumberFormatException ignored) {
      // falls through to the error below
    }
    throw new ClientConfigException("Option '" + RELAY_PORT + "' of catalog '" + catalogName
        + "' is a port number from 0 (any free port) to 65535, got '" + raw + "'");
  }

  /** {@value #RELAY_ENABLED}. */
  public boolean relayEnabled() {
    return relayEnabled;
  }

  /** {@value #RELAY_HOST}, or null for Spark's driver host. */
  public String relayHost() {
    return relayHost;
  }

  /** {@value #RELAY_BIND_ADDRESS}, or null. */
  public String relayBindAddress() {
    return relayBindAddress;
  }

  /** {@value #RELAY_PORT}. */
  public int relayPort() {
    return relayPort;
  }

  /** Reads and checks the options of catalog {@code catalogName}. */
  public static CatalogOptions parse(String catalogName, Map<String, String> options) {
    return new CatalogOptions(catalogName, options);
  }

  private static List<String> parseParent(String raw, String delimiter) {
    if (raw == null || raw.isBlank()) {
      return List.of();
    }
    List<String> parts = Arrays.asList(raw.trim().split(java.util.regex.Pattern.quote(delimiter)));
    if (parts.stream().anyMatch(String::isEmpty)) {
      throw new ClientConfigException("Option 'parent' ('" + raw + "') has an empty part; give "
          + "the namespace prefix as names joined by the delimiter '" + delimiter + "', e.g. a"
          + delimiter + "b");
    }
    return List.copyOf(parts);
  }

  private static long parseTtl(String raw) {
    if (raw == null) {
      return DEFAULT_CACHE_TTL_MS;
    }
    try {
      long v = Long.parseLong(raw.trim());
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException ignored) {
      // falls through to the error below
    }
    throw new ClientConfigException("Option 'cache.ttl-ms' must be a non-negative whole number "
        + "of milliseconds (0 disables the table cache), got '" + raw + "'");
  }

  private static Map<String, String> stripPrefix(Map<String, String> options, String prefix) {
    Map<String, String> out = new LinkedHashMap<>();
    options.forEach((k, v) -> {
      if (k.startsWith(prefix) && k.length() > prefix.length()) {
        out.put(k.substring(prefix.length()), v);
      }
    });
    return Collections.unmodifiableMap(out);
  }

  /** All options, for the REST client (which ignores the catalog's own). */
  public Map<String, String> clientOptions() {
    return clientOptions;
  }

  /** Namespace prefix prepended to every identifier; empty for none. */
  public List<String> parent() {
    return parent;
  }

  /** Table cache expiry after write; zero disables the cache. */
  public Duration cacheTtl() {
    return cacheTtl;
  }

  /** Storage options for Lance, overridden by the server's vended ones. May hold secrets. */
  public Map<String, String> storageOptions() {
    return storageOptions;
  }

  /** Properties given to every new table unless the statement sets them. */
  public Map<String, String> tableDefaults() {
    return tableDefaults;
  }

  /** Reserved for the materialized-view engine; null when unset. */
  public String mvMode() {
    return mvMode;
  }

  @Override
  public String toString() {
    // Storage options hold credentials: only their keys are shown.
    return "CatalogOptions{parent=" + parent + ", cacheTtl=" + cacheTtl + ", storageKeys="
        + storageOptions.keySet() + ", tableDefaults=" + tableDefaults + ", mvMode=" + mvMode
        + '}';
  }
}
