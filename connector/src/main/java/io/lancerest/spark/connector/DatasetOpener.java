package io.lancerest.spark.connector;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.Version;
import org.lance.io.StorageOptionsProvider;
import org.lance.spark.LanceRuntime;

/**
 * Opens the Lance dataset of a table at a version, telling a version or dataset that is not there
 * ({@link UnknownTableVersionException}, {@link LanceTableException.Reason#NOT_FOUND}) from other
 * failures.
 */
final class DatasetOpener {
  private DatasetOpener() {}

  /** The dataset at {@code version} ({@code null}: latest), renewing vended credentials. */
  static Dataset openAt(TableHandle handle, Long version) {
    StorageOptionsProvider refresh = CredentialRefresh.provider(handle);
    Dataset latest = open(handle.location(), handle.storageOptions(), handle.displayName(), null,
        refresh);
    if (version == null || version == latest.version()) {
      return latest;
    }
    try {
      if (version < 0) {
        throw new UnknownTableVersionException(handle.displayName(), "version " + version,
            "Versions are numbered from 1; its latest version is " + latest.version() + ".");
      }
      // Opened directly, by its own manifest. Listing the versions reads every manifest (34 ms
      // at 200 versions, 119 ms at 400 on a local disk; docs/benchmarks.md), so it is left to a
      // failed open, to tell a version that is not there (UnknownTableVersionException) from
      // another failure.
      return open(handle.location(), handle.storageOptions(), handle.displayName(), version,
          refresh);
    } catch (LanceTableException e) {
      try {
        requireVersion(handle, latest, version);
      } catch (RuntimeException listing) {
        listing.addSuppressed(e);
        throw listing;
      }
      throw e;
    } finally {
      latest.close();
    }
  }

  private static void requireVersion(TableHandle handle, Dataset latest, long version) {
    List<Version> versions = latest.listVersions();
    if (versions.stream().noneMatch(v -> v.getId() == version)) {
      throw new UnknownTableVersionException(
          handle.displayName(),
          "version " + version,
          versions.isEmpty()
              ? "The table has no versions."
              : "Its latest version is "
                  + latest.version()
                  + "; available versions: "
                  + describeRange(versions)
                  + " (older ones may have been cleaned up).");
    }
  }

  private static String describeRange(List<Version> versions) {
    long min = versions.stream().mapToLong(Version::getId).min().orElse(0);
    long max = versions.stream().mapToLong(Version::getId).max().orElse(0);
    return versions.size() == max - min + 1
        ? min + ".." + max
        : versions.stream()
            .map(v -> Long.toString(v.getId()))
            .limit(50)
            .collect(Collectors.joining(", "));
  }

  static Dataset open(String location, Map<String, String> storageOptions, String table) {
    return open(location, storageOptions, table, null, null);
  }

  private static Dataset open(String location, Map<String, String> storageOptions, String table,
      Long version, StorageOptionsProvider refresh) {
    ReadOptions.Builder options =
        new ReadOptions.Builder()
            .setStorageOptions(storageOptions == null ? Map.of() : storageOptions);
    if (version != null) {
      options.setVersion(version);
    }
    if (refresh != null) {
      options.setStorageOptionsProvider(refresh);
    }
    try {
      return Dataset.open(LanceRuntime.allocator(), location, options.build());
    } catch (RuntimeException e) {
      String name = table == null ? location : table;
      String message = String.valueOf(e.getMessage());
      boolean missing = message.toLowerCase(Locale.ROOT).contains("not found");
      throw new LanceTableException(
          missing
              ? LanceTableException.Reason.NOT_FOUND
              : LanceTableException.Reason.OPERATION_FAILED,
          name,
          (missing
                  ? "Table " + name + " has no Lance dataset at " + location
                  : "Cannot open the Lance dataset of table " + name + " at " + location)
              + (version == null ? "" : " (version " + version + ")")
              + ": "
              + message,
          e);
    }
  }
}
