package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.AlterTableDropColumnsRequest;
import io.lancerest.spark.connector.LanceTableAlterations;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.lance.Dataset;

/**
 * ALTER TABLE: sorts Spark's changes into property and column changes and applies each on the
 * server where it has the operation, otherwise on the dataset of a table it does not version.
 */
final class TableAlteration {
  private final LanceRestClient client;
  private final DescribedTables described;
  private final TablePropertyWrites properties;
  private volatile boolean serverColumnOps = true;

  TableAlteration(LanceRestClient client, DescribedTables described,
      TablePropertyWrites properties) {
    this.client = client;
    this.described = described;
    this.properties = properties;
  }

  void alter(List<String> id, TableChange... changes) {
    described.invalidate(id);
    DescribedTable e = described.describe(id);
    Map<String, String> set = new LinkedHashMap<>();
    Set<String> unset = new HashSet<>();
    List<TableChange> columnChanges = new ArrayList<>();
    for (TableChange c : changes) {
      if (c instanceof TableChange.SetProperty s) {
        checkSettable(id, s.property());
        if (s.property().equals(TableCatalog.PROP_COMMENT)
            && (s.value() == null || s.value().isEmpty())) {
          // COMMENT ON TABLE … IS NULL arrives as an empty comment: remove it, as Hive does.
          set.remove(s.property());
          unset.add(s.property());
        } else {
          unset.remove(s.property());
          set.put(s.property(), s.value());
        }
      } else if (c instanceof TableChange.RemoveProperty r) {
        checkSettable(id, r.property());
        unset.add(r.property());
      } else {
        columnChanges.add(c);
      }
    }
    if (!columnChanges.isEmpty() && isView(e)) {
      throw new IllegalArgumentException("Table " + Identifiers.display(id) + " is a "
          + "materialized view: its columns come from its definition, and adding, dropping, "
          + "renaming or retyping one would break its next refresh. Change the view's SELECT "
          + "instead (DROP MATERIALIZED VIEW, then CREATE MATERIALIZED VIEW)");
    }
    try {
      if (!set.isEmpty() || !unset.isEmpty()) {
        properties.alter(id, e, set, unset);
      }
      for (TableChange c : columnChanges) {
        alterColumn(id, e, c);
      }
    } finally {
      described.invalidate(id);
    }
  }

  /** Whether the table carries the materialized-view layout (a table it cannot open: no). */
  private static boolean isView(DescribedTable e) {
    try (Dataset ds = e.open(null)) {
      Map<String, String> md = ds.getSchema().getCustomMetadata();
      return md != null && md.containsKey(MaterializedViewLayout.MARKER);
    } catch (RuntimeException unreadable) {
      return false;
    }
  }

  private void checkSettable(List<String> id, String key) {
    if (TableProperties.isReserved(key)) {
      throw TableProperties.reserved(id, key);
    }
    if (TableProperties.CREATE_ONLY.contains(key.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("Table property '" + key + "' of "
          + Identifiers.display(id) + " is fixed when the table is created and cannot be "
          + "changed; recreate the table (CREATE OR REPLACE TABLE … AS SELECT) to change it");
    }
  }

  private void alterColumn(List<String> id, DescribedTable e, TableChange c) {
    if (serverColumnOps && tryServerColumnChange(id, c)) {
      return;
    }
    e.requireUnmanaged(id, "change columns");
    LanceTableAlterations.alterTable(e.handle, c);
  }

  /**
   * True when the server applied the change; false when it has no operation for it. Only column
   * drops go to the server: its AlterTableAlterColumns needs the full Arrow data type even for a
   * rename (the directory server rejects entries without {@code data_type}), which Spark's change
   * does not carry, so renames, type and nullability changes go to the dataset.
   */
  private boolean tryServerColumnChange(List<String> id, TableChange c) {
    if (!(c instanceof TableChange.DeleteColumn d)) {
      return false;
    }
    try {
      client.alterTableDropColumns(new AlterTableDropColumnsRequest().id(id)
          .columns(List.of(String.join(".", d.fieldNames()))));
      return true;
    } catch (UnsupportedOperationByServerException ex) {
      serverColumnOps = false;
      return false;
    }
  }
}
