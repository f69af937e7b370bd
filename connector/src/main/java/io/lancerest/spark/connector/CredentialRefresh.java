package io.lancerest.spark.connector;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.lance.Fragment;
import org.lance.ReadOptions;
import org.lance.WriteFragmentBuilder;
import org.lance.io.StorageOptionsProvider;
import org.lance.spark.LanceRuntime;

/**
 * Vended credentials that expire, renewed where Lance uses them: on the driver and in tasks.
 *
 * <p>lance-core renews a dataset's storage options (before {@code expires_at_millis}) through a
 * {@link StorageOptionsProvider}: here, lance-core's own namespace client asking DescribeTable
 * again, of the server or, when the server wants a secret executors never get, of the driver's
 * credential relay. lance-spark builds that provider in its tasks from the table's namespace
 * properties. The view engine's own tasks carry only a storage options map, so the same route
 * travels inside that map under {@value #PREFIX} keys ({@link #withRoute}); {@link #readOptions}
 * and {@link #fragments} turn it back into a provider. lance-core ignores those keys, as it
 * ignores every key it does not know.
 */
public final class CredentialRefresh {
  /** The prefix of the route's keys in a storage options map. */
  public static final String PREFIX = "lancerest.refresh.";
  private static final String IMPL = PREFIX + "impl";
  private static final String TABLE = PREFIX + "table.";
  private static final String NAMESPACE = PREFIX + "ns.";
  /** The key lance-core reads the expiry of vended credentials from (epoch milliseconds). */
  public static final String EXPIRES_AT = "expires_at_millis";
  private static final String REFRESH_OFFSET = "refresh_offset_millis";
  private static final long DEFAULT_REFRESH_OFFSET_MS = 60_000; // lance-core's

  private CredentialRefresh() {}

  /** When the credentials in {@code storage} expire, or null when they do not (or it is unreadable). */
  public static Long expiresAt(Map<String, String> storage) {
    String v = storage == null ? null : storage.get(EXPIRES_AT);
    if (v == null) {
      return null;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return null; // lance-core ignores it too
    }
  }

  /**
   * {@code storage} with the route to renew it, when its credentials expire: lance-core's
   * namespace {@code impl} with {@code namespaceProperties}, for table {@code tableId}.
   */
  public static Map<String, String> withRoute(Map<String, String> storage, String impl,
      Map<String, String> namespaceProperties, List<String> tableId) {
    if (expiresAt(storage) == null || impl == null) {
      return storage;
    }
    Map<String, String> out = new LinkedHashMap<>(storage);
    out.put(IMPL, impl);
    for (int i = 0; i < tableId.size(); i++) {
      out.put(TABLE + i, tableId.get(i));
    }
    namespaceProperties.forEach((k, v) -> out.put(NAMESPACE + k, v));
    return Map.copyOf(out);
  }

  /**
   * {@code vended} with {@code refresh_offset_millis} when it expires and has none: lance-core
   * renews credentials that long before their expiry, 60 s by default, which for credentials of
   * a few minutes or less would mean before every request. A quarter of what is left (at least
   * 1 s, at most 60 s) keeps a margin without asking all the time.
   */
  public static Map<String, String> withRefreshOffset(Map<String, String> vended) {
    Long expires = expiresAt(vended);
    if (expires == null || vended.containsKey(REFRESH_OFFSET)) {
      return vended;
    }
    long left = expires - System.currentTimeMillis();
    Map<String, String> out = new LinkedHashMap<>(vended);
    out.put(REFRESH_OFFSET, Long.toString(Math.max(1_000, Math.min(DEFAULT_REFRESH_OFFSET_MS,
        left / 4))));
    return out;
  }

  /** The provider that renews {@code storage}, or null when it does not expire or has no route. */
  public static StorageOptionsProvider provider(Map<String, String> storage) {
    if (storage == null || !storage.containsKey(IMPL)) {
      return null;
    }
    return provider(storage, storage.get(IMPL), namespace(storage), table(storage));
  }

  /**
   * What renews the table's vended credentials when they expire: a DescribeTable through the
   * handle's namespace connection, the one lance-spark gives its tasks. Null when they do not.
   */
  public static StorageOptionsProvider provider(TableHandle handle) {
    return provider(handle.storageOptions(), handle.namespaceImpl(),
        handle.namespaceProperties(), handle.tableId());
  }

  private static StorageOptionsProvider provider(Map<String, String> storage,
      String namespaceImpl, Map<String, String> namespaceProperties, List<String> tableId) {
    if (expiresAt(storage) == null || namespaceImpl == null || tableId == null
        || tableId.isEmpty()) {
      return null;
    }
    if ("rest".equals(namespaceImpl)) {
      return new DescribeTableCredentials(namespaceProperties, tableId);
    }
    return LanceRuntime.getOrCreateStorageOptionsProvider(namespaceImpl, namespaceProperties,
        tableId);
  }

  /**
   * A handle of the dataset at {@code location} with {@code storage}: named and renewed as the
   * route in {@code storage} says when there is one (lance-spark then renews the credentials in
   * its scans too), else named by its location.
   */
  public static TableHandle.Builder handle(String location, Map<String, String> storage) {
    boolean routed = storage != null && storage.containsKey(IMPL);
    TableHandle.Builder b = TableHandle.builder(routed ? table(storage) : List.of(location),
        location).storageOptions(storage == null ? Map.of() : storage);
    if (routed) {
      b.namespace(storage.get(IMPL), namespace(storage));
    }
    return b;
  }

  private static List<String> table(Map<String, String> storage) {
    List<String> table = new ArrayList<>();
    for (int i = 0; storage.containsKey(TABLE + i); i++) {
      table.add(storage.get(TABLE + i));
    }
    return table;
  }

  private static Map<String, String> namespace(Map<String, String> storage) {
    Map<String, String> ns = new LinkedHashMap<>();
    storage.forEach((k, v) -> {
      if (k.startsWith(NAMESPACE)) {
        ns.put(k.substring(NAMESPACE.length()), v);
      }
    });
    return ns;
  }

  /**
   * {@code storage} with credentials renewed now through its route when lance-core would renew
   * them (they expire within their refresh offset, or did). For lance-core calls that take
   * storage options but no provider ({@code Dataset.drop}, {@code Dataset.create}).
   */
  public static Map<String, String> current(Map<String, String> storage) {
    return current(storage, provider(storage));
  }

  /** {@link #current(Map)} through {@code p}, the provider that renews {@code storage}. */
  static Map<String, String> current(Map<String, String> storage, StorageOptionsProvider p) {
    if (p == null) {
      return storage;
    }
    long offset;
    try {
      offset = Long.parseLong(storage.getOrDefault(REFRESH_OFFSET,
          Long.toString(DEFAULT_REFRESH_OFFSET_MS)).trim());
    } catch (NumberFormatException e) {
      offset = DEFAULT_REFRESH_OFFSET_MS;
    }
    if (expiresAt(storage) - System.currentTimeMillis() > offset) {
      return storage;
    }
    Map<String, String> fresh = p.fetchStorageOptions();
    if (fresh == null || fresh.isEmpty()) {
      return storage;
    }
    Map<String, String> out = new LinkedHashMap<>(storage);
    out.putAll(fresh);
    return Map.copyOf(out);
  }

  /** Read options with {@code storage} and, when it expires, what renews it. */
  public static ReadOptions.Builder readOptions(Map<String, String> storage) {
    ReadOptions.Builder b = new ReadOptions.Builder()
        .setStorageOptions(storage == null ? Map.of() : storage);
    StorageOptionsProvider p = provider(storage);
    if (p != null) {
      b.setStorageOptionsProvider(p);
    }
    return b;
  }

  /** A fragment writer with {@code storage} and, when it expires, what renews it. */
  public static WriteFragmentBuilder fragments(Map<String, String> storage) {
    WriteFragmentBuilder b = Fragment.write().storageOptions(storage == null ? Map.of() : storage);
    StorageOptionsProvider p = provider(storage);
    if (p != null) {
      b.storageOptionsProvider(p);
    }
    return b;
  }
}
