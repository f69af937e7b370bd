package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.LanceLocation;
import org.apache.arrow.memory.BufferAllocator;

/** Opens a refresh's view or source dataset, failing with a message that names which one. */
final class RefreshDatasets {
  private RefreshDatasets() {}

  /**
   * The dataset at {@code uri}, at {@code version} ({@code null}: latest); {@code what} names
   * it in the error ("view", "source table").
   */
  static org.lance.Dataset open(BufferAllocator a, LanceLocation table, Long version,
      String what) {
    try {
      return table.open(a, version);
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Cannot open the " + what + " at '" + table.uri() + "'"
          + (version == null ? "" : " version " + version) + ": " + e.getMessage(), e);
    }
  }
}
