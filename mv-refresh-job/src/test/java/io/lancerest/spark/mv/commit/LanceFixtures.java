package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.WriteParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.operation.Append;

/** Small local Lance tables shaped like a query view: {@code __source_row_id int64, v string}. */
final class LanceFixtures {
  static final Schema VIEW_SCHEMA = new Schema(List.of(
      new Field("__source_row_id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
      new Field("v", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)));

  private LanceFixtures() {}

  /** Creates an empty table with stable row ids (version 1). */
  static void create(BufferAllocator a, String uri) {
    WriteParams p = new WriteParams.Builder().withEnableStableRowIds(true).build();
    Dataset.create(a, uri, VIEW_SCHEMA, p).close();
  }

  /**
   * A view table at {@code uri} with two fragments, source ids 0..4 and 5..9 (stable row ids
   * 0..9), at version 3.
   */
  static void twoFragments(BufferAllocator a, String uri) {
    create(a, uri);
    append(a, uri, 0, 5);
    if (append(a, uri, 5, 10) != 3) {
      throw new IllegalStateException("expected the table at version 3");
    }
  }

  static VectorSchemaRoot batch(BufferAllocator a, long from, long to) {
    VectorSchemaRoot root = VectorSchemaRoot.create(VIEW_SCHEMA, a);
    BigIntVector id = (BigIntVector) root.getVector(0);
    VarCharVector v = (VarCharVector) root.getVector(1);
    int n = (int) (to - from);
    id.allocateNew(n);
    v.allocateNew(n);
    for (int i = 0; i < n; i++) {
      id.set(i, from + i);
      v.setSafe(i, ("v" + (from + i)).getBytes(StandardCharsets.UTF_8));
    }
    root.setRowCount(n);
    return root;
  }

  /** Writes ids [from, to) as fragments, uncommitted. */
  static List<FragmentMetadata> fragments(BufferAllocator a, String uri, long from, long to) {
    try (VectorSchemaRoot root = batch(a, from, to)) {
      return FragmentShipping.write(LanceLocation.of(uri, Map.of()), a, root, 0);
    }
  }

  /** Appends ids [from, to) in one commit read at the latest version; returns the new version. */
  static long append(BufferAllocator a, String uri, long from, long to) {
    try (Dataset ds = Dataset.open(uri, a)) {
      List<FragmentMetadata> f = fragments(a, uri, from, to);
      Transaction t = new Transaction.Builder().readVersion(ds.version())
          .operation(Append.builder().fragments(f).build()).build();
      try (Dataset out = new CommitBuilder(ds).execute(t)) {
        return out.version();
      }
    }
  }

  /** Rows of the latest version as {source id → [_rowid, v]} in scan order. */
  static Map<Long, List<Object>> rows(BufferAllocator a, String uri) {
    try (Dataset ds = Dataset.open(uri, a)) {
      return rows(ds);
    }
  }

  static Map<Long, List<Object>> rows(Dataset ds) {
    ScanOptions o = new ScanOptions.Builder()
        .columns(List.of("__source_row_id", "v")).withRowId(true).build();
    Map<Long, List<Object>> out = new LinkedHashMap<>();
    try (LanceScanner s = ds.newScan(o); ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        BigIntVector id = (BigIntVector) root.getVector("__source_row_id");
        FieldVector rowId = root.getVector("_rowid");
        FieldVector v = root.getVector("v");
        for (int i = 0; i < root.getRowCount(); i++) {
          List<Object> row = new ArrayList<>();
          row.add(((Number) rowId.getObject(i)).longValue());
          row.add(String.valueOf(v.getObject(i)));
          out.put(id.get(i), row);
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }
}
