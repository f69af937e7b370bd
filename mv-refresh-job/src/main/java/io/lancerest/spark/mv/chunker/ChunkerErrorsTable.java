package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.FunctionEnvelope;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.operation.Append;

/**
 * Skipped parents of chunker refreshes: a plain Lance table ({@code <view>__errors}) with one
 * row per skipped parent per refresh, queryable like any table. Written after the view commit,
 * so it never names a refresh that did not land.
 */
final class ChunkerErrorsTable {
  static final Schema SCHEMA = new Schema(List.of(
      utf8("job_id"), utf8("view"), utf8("chunker"),
      long64("source_version"), long64("__source_row_id"),
      new Field("attempts", FieldType.notNullable(new ArrowType.Int(32, true)), null),
      utf8("error_class"), utf8("error_message"), long64("recorded_at_ms")));

  private ChunkerErrorsTable() {}

  private static Field utf8(String name) {
    return new Field(name, FieldType.nullable(ArrowType.Utf8.INSTANCE), null);
  }

  private static Field long64(String name) {
    return new Field(name, FieldType.notNullable(new ArrowType.Int(64, true)), null);
  }

  static void append(String uri, Map<String, String> storageOptions, String jobId, String view,
      FunctionEnvelope function, long sourceVersion,
      List<ChunkerRefreshResult.SkippedParent> skipped) {
    try (BufferAllocator a = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      root.allocateNew();
      long now = System.currentTimeMillis();
      for (int i = 0; i < skipped.size(); i++) {
        ChunkerRefreshResult.SkippedParent s = skipped.get(i);
        text(root, "job_id", i, jobId);
        text(root, "view", i, view);
        text(root, "chunker", i, function.name() + " " + function.version());
        ((BigIntVector) root.getVector("source_version")).setSafe(i, sourceVersion);
        ((BigIntVector) root.getVector("__source_row_id")).setSafe(i, s.sourceRowId());
        ((IntVector) root.getVector("attempts")).setSafe(i, s.attempts());
        text(root, "error_class", i, s.errorClass());
        text(root, "error_message", i, s.errorMessage());
        ((BigIntVector) root.getVector("recorded_at_ms")).setSafe(i, now);
      }
      root.setRowCount(skipped.size());
      Dataset existing;
      try {
        existing = Dataset.open(a, uri, new ReadOptions.Builder()
            .setStorageOptions(storageOptions).build());
      } catch (RuntimeException e) {
        existing = null;
      }
      if (existing == null) {
        try (Dataset d = Dataset.create(a, uri, SCHEMA,
            new WriteParams.Builder().withStorageOptions(storageOptions).build())) {
          existing = Dataset.open(a, uri, new ReadOptions.Builder()
              .setStorageOptions(storageOptions).build());
        }
      }
      try (Dataset ds = existing) {
        List<FragmentMetadata> f = Fragment.write().datasetUri(uri).allocator(a).data(root)
            .storageOptions(storageOptions).execute();
        Transaction txn = new Transaction.Builder().readVersion(ds.version())
            .operation(Append.builder().fragments(f).build()).build();
        new CommitBuilder(ds).execute(txn).close();
      }
    }
  }

  private static void text(VectorSchemaRoot root, String col, int i, String v) {
    VarCharVector vec = (VarCharVector) root.getVector(col);
    if (v == null) {
      vec.setNull(i);
    } else {
      vec.setSafe(i, v.getBytes(StandardCharsets.UTF_8));
    }
  }
}
