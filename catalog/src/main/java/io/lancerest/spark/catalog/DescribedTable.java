package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.spark.connector.TableHandle;
import java.util.List;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.spark.LanceRuntime;

/** A table as the namespace described it, its connector handle and, once loaded, its Spark table. */
final class DescribedTable {
  final DescribeTableResponse describe;
  final TableHandle handle;
  volatile CatalogTable table;

  DescribedTable(DescribeTableResponse describe, TableHandle handle) {
    this.describe = describe;
    this.handle = handle;
  }

  /** The table's dataset at {@code version} ({@code null}: latest). */
  Dataset open(Long version) {
    ReadOptions.Builder ro = new ReadOptions.Builder().setStorageOptions(handle.storageOptions());
    if (version != null) {
      ro.setVersion(version);
    }
    return Dataset.open(LanceRuntime.allocator(), handle.location(), ro.build());
  }

  /**
   * Refuses {@code what} on a table whose versions the server manages: the server lacks the
   * operation, and changing the Lance dataset directly would bypass it.
   */
  void requireUnmanaged(List<String> id, String what) {
    if (handle.managedVersioning()) {
      throw new UnsupportedCatalogOperationException("Cannot " + what + " of table "
          + Identifiers.display(id) + ": the namespace server manages its versions "
          + "(managed_versioning=true) but does not implement this operation, and changing the "
          + "Lance dataset directly would bypass it");
    }
  }
}
