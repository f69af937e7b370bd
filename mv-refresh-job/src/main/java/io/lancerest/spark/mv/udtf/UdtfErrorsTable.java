package io.lancerest.spark.mv.udtf;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;

/**
 * The table where skipped partitions are recorded, so a PARTIAL view is never silent: one row
 * per skipped partition per refresh, appended before the view commit. It is a plain Lance table
 * ({@code <view>__errors} next to the view by default), so it can be queried like any table.
 */
final class UdtfErrorsTable {
  static final Schema SCHEMA = new Schema(List.of(
      utf8("job_id"), utf8("view"), utf8("udtf_name"), utf8("udtf_version"),
      new Field("source_version", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      utf8("partition_column"), utf8("partition_key"),
      new Field("attempts", FieldType.notNullable(new ArrowType.Int(32, true)), null),
      utf8("error_class"), utf8("error_message"),
      new Field("recorded_at_ms", FieldType.notNullable(new ArrowType.Int(64, true)), null)));

  private UdtfErrorsTable() {}

  private static Field utf8(String name) {
    return new Field(name, FieldType.nullable(ArrowType.Utf8.INSTANCE), null);
  }

  static void append(String location, Map<String, String> storageOptions, String jobId,
      String view, UdtfDefinition def, long sourceVersion,
      List<UdtfRefreshResult.SkippedPartition> skipped) {
    if (skipped.isEmpty()) {
      return;
    }
    try (BufferAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      root.allocateNew();
      long now = System.currentTimeMillis();
      for (int i = 0; i < skipped.size(); i++) {
        UdtfRefreshResult.SkippedPartition s = skipped.get(i);
        set(root, "job_id", i, jobId);
        set(root, "view", i, view);
        set(root, "udtf_name", i, def.name());
        set(root, "udtf_version", i, def.version());
        ((BigIntVector) root.getVector("source_version")).setSafe(i, sourceVersion);
        set(root, "partition_column", i, def.keyColumn());
        set(root, "partition_key", i, s.partitionKey());
        ((IntVector) root.getVector("attempts")).setSafe(i, s.attempts());
        set(root, "error_class", i, s.errorClass());
        set(root, "error_message", i, s.errorMessage());
        ((BigIntVector) root.getVector("recorded_at_ms")).setSafe(i, now);
      }
      root.setRowCount(skipped.size());
      boolean exists;
      try (Dataset ignored = Dataset.open(location, allocator)) {
        exists = true;
      } catch (RuntimeException e) {
        exists = false;
      }
      try (ArrowReader reader = new OneBatch(allocator, root);
          Dataset ignored = Dataset.write()
              .allocator(allocator)
              .reader(reader)
              .uri(location)
              .storageOptions(storageOptions)
              .mode(exists ? WriteParams.WriteMode.APPEND : WriteParams.WriteMode.CREATE)
              .execute()) {
        // written
      }
    } catch (Exception e) {
      throw new UdtfRefreshException("Cannot record " + skipped.size() + " skipped partitions "
          + "of view '" + view + "' in errors table '" + location + "'; the view was not "
          + "committed (a partial view is never committed unrecorded): " + e.getMessage(), e);
    }
  }

  private static void set(VectorSchemaRoot root, String column, int row, String value) {
    VarCharVector v = (VarCharVector) root.getVector(column);
    if (value == null) {
      v.setNull(row);
    } else {
      v.setSafe(row, value.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Hands one filled batch to lance-core's writer. */
  private static final class OneBatch extends ArrowReader {
    private final VectorSchemaRoot data;
    private boolean done;

    OneBatch(BufferAllocator allocator, VectorSchemaRoot data) {
      super(allocator);
      this.data = data;
    }

    @Override
    public boolean loadNextBatch() throws java.io.IOException {
      if (done) {
        return false;
      }
      done = true;
      VectorSchemaRoot root = getVectorSchemaRoot();
      try (var batch = new org.apache.arrow.vector.VectorUnloader(data).getRecordBatch()) {
        new org.apache.arrow.vector.VectorLoader(root).load(batch);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected Schema readSchema() {
      return SCHEMA;
    }
  }
}
