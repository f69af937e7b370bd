package io.lancerest.spark.connector;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.Dataset;
import org.lance.namespace.LanceNamespace;
import org.lance.spark.LancePositionDeltaDataset;
import org.lance.spark.LanceRuntime;
import org.lance.spark.LanceSparkReadOptions;

/**
 * Builds lance-spark's row-level table for a handle: its read options, scan batch size and, where
 * only the namespace knows the table, the namespace it opens through.
 */
final class TableReads {
  private TableReads() {}

  /** The table over {@code ds}, read at {@code version} ({@code null}: latest). */
  static Table newTable(TableHandle handle, Long version, Dataset ds, String catalogName) {
    LanceSparkReadOptions read = readOptions(handle, version, catalogName);
    int batch = handle.scanBatchRows() != null ? handle.scanBatchRows()
        : ScanBatchRows.forDataset(ds);
    if (batch != read.getBatchSize()) {
      read = readOptions(handle, version, catalogName, batch);
    }
    return new LancePositionDeltaDataset(
        read,
        LanceArrowUtils.fromArrowSchema(ds.getSchema()),
        handle.storageOptions(),
        handle.namespaceImpl(),
        handle.namespaceProperties(),
        handle.managedVersioning(),
        ds.getLanceFileFormatVersion());
  }

  static LanceSparkReadOptions readOptions(TableHandle handle, Long version, String catalogName) {
    return readOptions(handle, version, catalogName, null);
  }

  /** @param batchRows rows per scan batch, or {@code null} for lance-spark's */
  static LanceSparkReadOptions readOptions(TableHandle handle, Long version, String catalogName,
      Integer batchRows) {
    // Mutable copies: lance-spark's OPTIMIZE and CREATE INDEX ship these options to their tasks
    // with Kryo, which rebuilds a collection by adding to a new instance of its class and so
    // fails on the JDK's immutable ones (UnsupportedOperationException).
    LanceSparkReadOptions.Builder options =
        LanceSparkReadOptions.builder()
            .datasetUri(handle.location())
            .storageOptions(new java.util.HashMap<>(handle.storageOptions()))
            .tableId(new java.util.ArrayList<>(handle.tableId()))
            .catalogName(catalogName);
    if (batchRows != null) {
      options.batchSize(batchRows);
    }
    if (version != null) {
      // lance-spark 0.4.0 keeps read versions as Integer.
      options.version(Math.toIntExact(version));
    }
    if (handle.managedVersioning() || (handle.namespaceImpl() != null
        && CredentialRefresh.expiresAt(handle.storageOptions()) != null)) {
      // Only the namespace knows the current version of such tables, so lance-spark must open
      // through it; and lance-spark renews expiring credentials on the driver (its commits)
      // only for datasets it opened through one. Other tables skip it: every open through a
      // namespace is a DescribeTable.
      options.namespace(namespace(handle));
    }
    return options.build();
  }

  static LanceNamespace namespace(TableHandle handle) {
    if (handle.namespaceImpl() == null) {
      throw new IllegalStateException(
          "Table "
              + handle.displayName()
              + " uses managed versioning but its handle carries no namespace connection"
              + " (namespaceImpl); build the TableHandle with namespace(\"rest\", {uri, header.*}).");
    }
    return LanceRuntime.getOrCreateNamespace(handle.namespaceImpl(), handle.namespaceProperties());
  }
}
