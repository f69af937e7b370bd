package io.lancerest.spark.computed;

import java.io.Serializable;
import java.util.Map;

/**
 * What every task of one backfill needs, resolved once on the driver and shipped to the tasks.
 *
 * @param table the table's name as users write it, for messages
 * @param uri the table's location
 * @param storageOptions its storage options (a task builds its own renewal route from them)
 * @param readVersion the version whose fragments are read
 * @param column the computed column
 * @param definition the column's stored definition ({@link ComputedColumn#toMetadataValue()})
 * @param fieldId the column's Lance field id
 * @param options the backfill's options
 * @param condition the compiled {@code where}, or {@code null}
 */
public record BackfillTaskSpec(String table, String uri, Map<String, String> storageOptions,
    long readVersion, String column, String definition, int fieldId, BackfillOptions options,
    RowCondition condition) implements Serializable {
  @Override
  public String toString() { // storage options may hold credentials
    return "BackfillTaskSpec{" + table + "." + column + " at version " + readVersion + "}";
  }
}
