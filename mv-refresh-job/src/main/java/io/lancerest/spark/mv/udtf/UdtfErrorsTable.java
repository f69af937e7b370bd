package io.lancerest.spark.mv.udtf;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.lance.ReadOptions;

/**
 * The table where skipped partitions are recorded, so a PARTIAL view is never silent: one row
 * per skipped partition per refresh, appended before the view commit. It is a plain Lance table
 * ({@code <view>__errors} next to the view by default), so it can be queried like any table.
 */
final class UdtfErrorsTable {
  static final StructType SCHEMA = new StructType()
      .add("job_id", DataTypes.StringType)
      .add("view", DataTypes.StringType)
      .add("udtf_name", DataTypes.StringType)
      .add("udtf_version", DataTypes.StringType)
      .add("source_version", DataTypes.LongType, false)
      .add("partition_column", DataTypes.StringType)
      .add("partition_key", DataTypes.StringType)
      .add("attempts", DataTypes.IntegerType, false)
      .add("error_class", DataTypes.StringType)
      .add("error_message", DataTypes.StringType)
      .add("recorded_at_ms", DataTypes.LongType, false);

  private UdtfErrorsTable() {}

  static void append(SparkSession spark, String location, Map<String, String> storageOptions,
      String jobId, String view, UdtfDefinition def, long sourceVersion,
      List<UdtfRefreshResult.SkippedPartition> skipped) {
    if (skipped.isEmpty()) {
      return;
    }
    long now = System.currentTimeMillis();
    List<Row> rows = new ArrayList<>();
    for (UdtfRefreshResult.SkippedPartition s : skipped) {
      rows.add(RowFactory.create(jobId, view, def.name(), def.version(), sourceVersion,
          def.keyColumn(), s.partitionKey(), s.attempts(), s.errorClass(), s.errorMessage(),
          now));
    }
    try {
      spark.createDataFrame(rows, SCHEMA).coalesce(1).write().format("lance")
          .options(storageOptions)
          .mode(exists(location, storageOptions) ? "append" : "errorifexists")
          .save(location);
    } catch (RuntimeException e) {
      throw new UdtfRefreshException("Cannot record " + skipped.size() + " skipped partitions "
          + "of view '" + view + "' in errors table '" + location + "'; the view was not "
          + "committed (a partial view is never committed unrecorded): " + e.getMessage(), e);
    }
  }

  private static boolean exists(String location, Map<String, String> storageOptions) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ignored = org.lance.Dataset.open(a, location,
            new ReadOptions.Builder().setStorageOptions(storageOptions).build())) {
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }
}
