package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.CredentialRefresh;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.ReadOptions;

/** Opens a refresh's view or source dataset, failing with a message that names which one. */
final class RefreshDatasets {
  private RefreshDatasets() {}

  /**
   * The dataset at {@code uri}, at {@code version} ({@code null}: latest); {@code what} names
   * it in the error ("view", "source table").
   */
  static org.lance.Dataset open(BufferAllocator a, String uri, Map<String, String> storage,
      Long version, String what) {
    ReadOptions.Builder ro = CredentialRefresh.readOptions(storage);
    if (version != null) {
      ro.setVersion(version);
    }
    try {
      return org.lance.Dataset.open(a, uri, ro.build());
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Cannot open the " + what + " at '" + uri + "'"
          + (version == null ? "" : " version " + version) + ": " + e.getMessage(), e);
    }
  }
}
