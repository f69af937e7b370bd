package io.lancerest.spark.mv.server;

import io.lancerest.client.RestClientConfig;
import io.lancerest.spark.mv.cli.ConnectionFlags;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.network.util.JavaUtils;

/**
 * The service's command line.
 *
 * @param upstream the Lance REST namespace the service fronts
 * @param catalogOptions how the service itself reaches the upstream ({@code uri}, credentials,
 *     headers): the catalog options of its refreshes
 * @param maxConcurrentJobs refreshes running at once
 * @param maxQueuedJobs refreshes waiting for a free slot; one more is answered 503
 * @param maxBodyBytes the largest request body a materialized-view route reads
 * @param requireWritePermission whether a caller must show, with a write the upstream allows it,
 *     that it may write in the view's namespace before the service creates, refreshes or cancels
 *     for it
 * @param auto how views created with {@code auto_refresh} are refreshed by the service
 */
public record ServerConfig(String upstream, String host, int port,
    Map<String, String> catalogOptions, int maxConcurrentJobs, int maxQueuedJobs,
    long maxBodyBytes, boolean requireWritePermission, Auto auto) {
  /**
   * Auto refresh's settings.
   *
   * @param enabled whether views created with {@code auto_refresh} are refreshed by the service
   * @param poll how often auto refresh looks at the sources
   * @param minSourceVersions source versions a view must lag behind before auto refresh runs
   * @param cooldown the least time between two auto refreshes of one view
   * @param backoff the wait after a view's refresh failed, doubled with each failure in a row
   * @param backoffMax the longest such wait
   * @param rescan how often every table is read again to find views (new names are read at the
   *     listing after they appear)
   */
  public record Auto(boolean enabled, Duration poll, int minSourceVersions, Duration cooldown,
      Duration backoff, Duration backoffMax, Duration rescan) {}

  public static final int DEFAULT_PORT = 2334;

  static final String USAGE = """
      Usage: spark-submit --class io.lancerest.spark.mv.server.MaterializedViewServer <jar> \\
                 --upstream URL [options]

      Serves the spec's materialized-view routes (create, refresh) in front of a Lance REST
      namespace, refreshes views as Spark jobs of this driver, and forwards every other route.

      Upstream (the namespace this service fronts; the service's own identity there):
        --upstream URL                 Lance REST namespace server (required)
      """ + ConnectionFlags.USAGE + """
      Listening:
        --host H                       address to listen on (default 127.0.0.1)
        --port N                       port (default 2334; 0 picks a free one)
        --max-body-bytes N             largest body a materialized-view route accepts (default 16m)
      Jobs:
        --max-concurrent-jobs N        refreshes running at once (default 2)
        --max-queued-jobs N            refreshes waiting; beyond, 503 with Retry-After (default 16)
      Auto refresh (views created with auto_refresh = true):
        --auto-refresh true|false      refresh them when their source changes (default true)
        --auto-refresh-poll D          how often sources are looked at (default 10s)
        --auto-refresh-min-versions N  source versions behind before a refresh (default 1)
        --auto-refresh-cooldown D      least time between two refreshes of a view (default 30s)
        --auto-refresh-backoff D       wait after a failed refresh of a view, doubled with each
                                       failure in a row; an outage or a commit conflict
                                       waits this long without doubling (default 1min)
        --auto-refresh-backoff-max D   longest such wait (default 1h)
        --auto-refresh-rescan D        how often every table is read again to find views
                                       created elsewhere (default 1h; new names: every minute)
      Callers:
        --require-write-permission true|false
                                       before creating, refreshing or cancelling for a caller,
                                       check that the upstream lets the caller create the
                                       view's namespace (CreateNamespace, mode ExistOk, sent
                                       as the caller; default false)
        --help                         this text
      """;

  public ServerConfig {
    catalogOptions = Map.copyOf(catalogOptions);
  }

  /** No secret values: safe for logs. */
  @Override
  public String toString() {
    Map<String, String> safe = new LinkedHashMap<>();
    catalogOptions.forEach((k, v) -> safe.put(k, ConnectionFlags.isSecret(k) ? "****" : v));
    return "ServerConfig[upstream=" + upstream + ", listen=" + host + ":" + port
        + ", catalogOptions=" + safe + ", maxConcurrentJobs=" + maxConcurrentJobs
        + ", maxQueuedJobs=" + maxQueuedJobs + ", maxBodyBytes=" + maxBodyBytes
        + ", requireWritePermission=" + requireWritePermission + ", auto=" + auto + "]";
  }

  /** Parses the flags; an {@link IllegalArgumentException} names the flag at fault. */
  public static ServerConfig parse(String[] argv) {
    Map<String, String> catalog = new LinkedHashMap<>();
    Map<String, String> own = new LinkedHashMap<>();
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException("Unexpected argument '" + a + "'; options start "
            + "with --");
      }
      String name = a.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else {
        if (i + 1 >= argv.length || argv[i + 1].startsWith("--")) {
          throw new IllegalArgumentException("--" + name + " needs a value");
        }
        value = argv[++i];
      }
      if (List.of("upstream", "host", "port", "max-body-bytes", "max-concurrent-jobs",
          "max-queued-jobs", "auto-refresh", "auto-refresh-poll", "auto-refresh-min-versions",
          "auto-refresh-cooldown", "auto-refresh-backoff", "auto-refresh-backoff-max",
          "auto-refresh-rescan", "require-write-permission").contains(name)) {
        if (own.putIfAbsent(name, value) != null) {
          throw new IllegalArgumentException("--" + name + " is given twice");
        }
      } else if (!ConnectionFlags.apply(name, value, catalog)) {
        throw new IllegalArgumentException("Unknown option --" + name);
      }
    }
    String upstream = own.get("upstream");
    if (upstream == null) {
      throw new IllegalArgumentException("--upstream is required (the Lance REST namespace "
          + "this service fronts)");
    }
    catalog.put(RestClientConfig.URI, upstream);
    ConnectionFlags.checkCombination(catalog);
    RestClientConfig.fromProperties(catalog); // the uri and the credentials are usable
    Duration backoff = duration(own, "auto-refresh-backoff", "1min", 0);
    Duration backoffMax = duration(own, "auto-refresh-backoff-max", "1h", 0);
    if (backoffMax.compareTo(backoff) < 0) {
      throw new IllegalArgumentException("--auto-refresh-backoff-max (" + backoffMax.toMillis()
          + " ms) must not be shorter than --auto-refresh-backoff (" + backoff.toMillis()
          + " ms)");
    }
    Auto auto = new Auto(bool(own, "auto-refresh", true),
        duration(own, "auto-refresh-poll", "10s", 100),
        intFlag(own, "auto-refresh-min-versions", 1, 1, Integer.MAX_VALUE),
        duration(own, "auto-refresh-cooldown", "30s", 0), backoff, backoffMax,
        duration(own, "auto-refresh-rescan", "1h", 1000));
    return new ServerConfig(upstream, own.getOrDefault("host", "127.0.0.1"),
        intFlag(own, "port", DEFAULT_PORT, 0, 65535), catalog,
        intFlag(own, "max-concurrent-jobs", 2, 1, 1024),
        intFlag(own, "max-queued-jobs", 16, 0, 1_000_000),
        bytes(own, "max-body-bytes", 16L << 20), bool(own, "require-write-permission", false),
        auto);
  }

  private static int intFlag(Map<String, String> m, String flag, int dflt, int min, int max) {
    String v = m.get(flag);
    if (v == null) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("--" + flag + " must be a whole number from " + min
        + " to " + max + ", got '" + v + "'");
  }

  private static long bytes(Map<String, String> m, String flag, long dflt) {
    String v = m.get(flag);
    if (v == null) {
      return dflt;
    }
    try {
      long n = JavaUtils.byteStringAsBytes(v.trim());
      if (n > 0) {
        return n;
      }
    } catch (RuntimeException e) {
      // reported below
    }
    throw new IllegalArgumentException("--" + flag + " must be a positive size (e.g. 16m), got '"
        + v + "'");
  }

  private static Duration duration(Map<String, String> m, String flag, String dflt,
      long minMillis) {
    String v = m.getOrDefault(flag, dflt);
    try {
      long ms = JavaUtils.timeStringAsMs(v.trim());
      if (ms >= minMillis) {
        return Duration.ofMillis(ms);
      }
    } catch (RuntimeException e) {
      // reported below
    }
    throw new IllegalArgumentException("--" + flag + " must be a duration of at least "
        + minMillis + " ms (e.g. 500ms, 10s, 1min), got '" + v + "'");
  }

  private static boolean bool(Map<String, String> m, String flag, boolean dflt) {
    String v = m.get(flag);
    if (v == null) {
      return dflt;
    }
    String t = v.trim().toLowerCase(Locale.ROOT);
    if (t.equals("true") || t.equals("false")) {
      return t.equals("true");
    }
    throw new IllegalArgumentException("--" + flag + " must be true or false, got '" + v + "'");
  }
}
