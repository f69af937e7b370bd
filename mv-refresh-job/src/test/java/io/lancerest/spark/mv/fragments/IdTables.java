package io.lancerest.spark.mv.fragments;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.operation.Append;

/**
 * Lance tables of one {@code id} column with stable row ids, written fragment by fragment with
 * lance-core alone, for the fragment tests: a fragment's ids are its row ids (from 0).
 */
final class IdTables {
  static final Schema SCHEMA = new Schema(List.of(
      new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null)));

  private IdTables() {}

  /** An empty table at {@code uri}. */
  static void create(BufferAllocator a, String uri) {
    Dataset.create(a, uri, SCHEMA, new WriteParams.Builder().withEnableStableRowIds(true)
        .build()).close();
  }

  /** Appends one fragment of ids {@code [from, to)}, one commit. */
  static void append(BufferAllocator a, String uri, long from, long to) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      BigIntVector id = (BigIntVector) root.getVector(0);
      id.allocateNew((int) (to - from));
      for (int i = 0; i < to - from; i++) {
        id.set(i, from + i);
      }
      root.setRowCount((int) (to - from));
      List<FragmentMetadata> f = Fragment.write().datasetUri(uri).allocator(a).data(root)
          .execute();
      try (Dataset ds = Dataset.open(uri, a);
          Transaction t = new Transaction.Builder().readVersion(ds.version())
              .operation(Append.builder().fragments(f).build()).build()) {
        new CommitBuilder(ds).execute(t).close();
      }
    }
  }

  static long latest(BufferAllocator a, String uri) {
    try (Dataset ds = Dataset.open(uri, a)) {
      return ds.version();
    }
  }

  static Dataset at(BufferAllocator a, String uri, long version) {
    return Dataset.open(a, uri, new org.lance.ReadOptions.Builder().setVersion(version).build());
  }
}
