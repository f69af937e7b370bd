package io.lancerest.spark.connector.read;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.connector.read.InputPartition;
import org.lance.spark.read.LanceInputPartition;

/**
 * An input partition lance-spark reads with other columns than Spark asked for: {@code _rowaddr}
 * added, {@code _rowid} left out; {@link SafeReaderFactory} gives Spark its columns back.
 *
 * @param lance what lance-spark reads
 * @param layout for each column of the batches lance-spark would have read for the partition
 *     Spark planned ({@link SafeScan#batchColumns}), its index in the batches read now, or {@code
 *     -1} for {@code _rowid}, mapped from the column at {@code address}
 * @param address the index of {@code _rowaddr} in the batches read
 * @param sequences the row-id sequence ({@code RowIdMeta} JSON) of each fragment whose row ids
 *     are mapped, by fragment id
 */
record SafePartition(LanceInputPartition lance, int[] layout, int address,
    Map<Integer, String> sequences) implements InputPartition {
  private static final long serialVersionUID = 1L;

  SafePartition {
    sequences = new HashMap<>(sequences);
  }

  @Override
  public String[] preferredLocations() {
    return lance.preferredLocations();
  }
}
