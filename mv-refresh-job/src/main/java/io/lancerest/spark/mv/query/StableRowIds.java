package io.lancerest.spark.mv.query;

import org.lance.Dataset;
import org.lance.Fragment;

/**
 * Whether a source table has stable row ids. Incremental views key their rows by the source's
 * {@code _rowid}; without stable row ids that is a row address, which compaction and deletes
 * move, so the view would silently go wrong. lance-core fixes the setting when the dataset is
 * created, and every fragment then carries row-id metadata.
 */
public final class StableRowIds {
  private StableRowIds() {}

  /**
   * {@code false} when the dataset's fragments have no row-id metadata; {@code true} when they
   * have; {@code null} when it has no fragments, so it cannot tell (checked again on refresh).
   */
  public static Boolean of(Dataset ds) {
    for (Fragment f : ds.getFragments()) {
      return f.metadata().getRowIdMeta() != null;
    }
    return null;
  }

  /** The error text: what is wrong and how to fix it (the setting cannot be changed later). */
  public static String missingMessage(String what, Long version) {
    return "The source table of " + what + (version == null ? "" : " (version " + version + ")")
        + " does not have stable row ids, so its rows cannot be followed across versions "
        + "(compaction and deletes move row addresses). The setting is fixed when a table is "
        + "created and cannot be switched on afterwards (ALTER TABLE … SET TBLPROPERTIES is "
        + "refused). Copy the table into one with stable row ids — CREATE TABLE <new_table> "
        + "TBLPROPERTIES ('enable_stable_row_ids' = 'true') AS SELECT * FROM <source> (the "
        + "LanceRestCatalog enables them by default) — and define the view over the copy";
  }
}
