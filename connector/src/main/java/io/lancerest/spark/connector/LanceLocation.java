package io.lancerest.spark.connector;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ReadOptions;
import org.lance.WriteFragmentBuilder;
import org.lance.io.StorageOptionsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Lance table as one statement resolved it: where its data lives, the storage options that open
 * it and, when those are vended credentials that expire, the one provider that renews them.
 *
 * <p>Built once from a DescribeTable on the driver and passed down, so that every open of the
 * table in the statement reads the same options and shares one provider, instead of each step
 * working the route out again from the map. Tasks receive only the map (a provider is not
 * serializable) and build their own with {@link #of}. The provider is made at the first open, so
 * a route that cannot be followed fails there, inside the caller's "cannot open" message.
 */
public final class LanceLocation {
  private static final Logger LOG = LoggerFactory.getLogger(LanceLocation.class);
  /**
   * The user information of a URI ({@code s3://key:secret@bucket/…}), which may be a key: a
   * {@code user:password} part up to its {@code @} (a secret key may hold a {@code /}, not a
   * {@code ?} or {@code #}), or a user part without one.
   */
  private static final java.util.regex.Pattern USER_INFO = java.util.regex.Pattern.compile(
      "(?i)(\\b[a-z][a-z0-9+.-]*://)(?:[^/\\s@'\":]*:[^\\s@'\"?#]*|[^/\\s@'\"]+)@");
  private final String uri;
  private final Map<String, String> storageOptions;
  private final Supplier<Optional<StorageOptionsProvider>> renewal;

  private LanceLocation(String uri, Map<String, String> storageOptions,
      Supplier<Optional<StorageOptionsProvider>> renewal) {
    this.uri = Objects.requireNonNull(uri, "uri");
    this.storageOptions = storageOptions;
    this.renewal = renewal;
  }

  /** The table at {@code uri} opened with {@code storageOptions} (may hold a renewal route). */
  public static LanceLocation of(String uri, Map<String, String> storageOptions) {
    Map<String, String> storage = new LinkedHashMap<>();
    if (storageOptions != null) {
      // a server may send a JSON null for an option it has no value for: lance-core gets none
      storageOptions.forEach((k, v) -> {
        if (k != null && v != null) {
          storage.put(k, v);
        }
      });
    }
    Map<String, String> options = Collections.unmodifiableMap(storage);
    return new LanceLocation(uri, options,
        Memoized.of(() -> Optional.ofNullable(CredentialRefresh.provider(options))));
  }

  /**
   * Another table under the same credentials, such as a view's errors table next to it: the same
   * storage options and the same provider.
   */
  public LanceLocation sibling(String otherUri) {
    return otherUri.equals(uri) ? this : new LanceLocation(otherUri, storageOptions, renewal);
  }

  public String uri() {
    return uri;
  }

  /** The storage options as resolved (with the renewal route's keys, which lance-core ignores). */
  public Map<String, String> storageOptions() {
    return storageOptions;
  }

  /** Read options with the storage options and, when they expire, this location's provider. */
  public ReadOptions.Builder readOptions() {
    ReadOptions.Builder b = new ReadOptions.Builder().setStorageOptions(storageOptions);
    StorageOptionsProvider p = renewal.get().orElse(null);
    if (p != null) {
      b.setStorageOptionsProvider(p);
    }
    return b;
  }

  /**
   * The dataset at {@code version} ({@code null}: latest). Each open reads the table's manifest
   * from its store, so each is logged (DEBUG) for those who count what a statement costs.
   */
  public Dataset open(BufferAllocator allocator, Long version) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("Opening Lance table {} at {}", shown(uri), version == null
          ? "its latest version" : "version " + version);
    }
    ReadOptions.Builder b = readOptions();
    if (version != null) {
      b.setVersion(version);
    }
    return Dataset.open(allocator, uri, b.build());
  }

  /** A fragment writer with the storage options and, when they expire, this provider. */
  public WriteFragmentBuilder fragments() {
    WriteFragmentBuilder b = Fragment.write().storageOptions(storageOptions);
    StorageOptionsProvider p = renewal.get().orElse(null);
    if (p != null) {
      b.storageOptionsProvider(p);
    }
    return b;
  }

  /**
   * The storage options with credentials renewed now when lance-core would renew them, for calls
   * that take options but no provider ({@code Dataset.drop}, {@code Dataset.create}).
   */
  public Map<String, String> current() {
    return CredentialRefresh.current(storageOptions, renewal.get().orElse(null));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LanceLocation l && l.uri.equals(uri)
        && l.storageOptions.equals(storageOptions);
  }

  @Override
  public int hashCode() {
    return uri.hashCode();
  }

  /**
   * The location as a log shows it: a user part or a query string, where a signed URL carries
   * its credentials, masked.
   */
  static String shown(String uri) {
    return withoutUserInfo(uri).replaceFirst("\\?.*$", "?***");
  }

  /** {@code text} with the user information of every URI in it masked ({@code s3://***@b/…}). */
  public static String withoutUserInfo(String text) {
    return USER_INFO.matcher(text).replaceAll("$1***@");
  }

  /** Storage options hold credentials: only their keys are shown. */
  @Override
  public String toString() {
    return shown(uri) + " (storage options " + storageOptions.keySet() + ")";
  }
}
