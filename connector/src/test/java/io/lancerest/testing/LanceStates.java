package io.lancerest.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.compaction.CompactionOptions;

/**
 * Lance datasets in the fragment states of {@code FragmentHazard}, written with lance-core alone:
 * rows {@code (id BIGINT, k INT = id % 1000, v DOUBLE = id / 2, name STRING = 'name' || id)},
 * optionally with a 4-dimensional float vector {@code vec} and a blob column {@code data}
 * ({@link #writeWide}).
 */
public final class LanceStates {
  private LanceStates() {}

  public static Schema schema() {
    return schema(false, false);
  }

  static Schema schema(boolean vector, boolean blob) {
    List<Field> f = new java.util.ArrayList<>(List.of(
        Field.nullable("id", new ArrowType.Int(64, true)),
        Field.nullable("k", new ArrowType.Int(32, true)),
        Field.nullable("v", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        Field.nullable("name", new ArrowType.Utf8())));
    if (vector) {
      f.add(new Field("vec", FieldType.nullable(new ArrowType.FixedSizeList(4)), List.of(
          Field.nullable("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))));
    }
    if (blob) {
      f.add(new Field("data", new FieldType(true, ArrowType.LargeBinary.INSTANCE, null,
          java.util.Map.of("lance-encoding:blob", "true")), null));
    }
    return new Schema(f);
  }

  /** Writes ids {@code [from, to)}: creates the dataset, or appends when it exists. */
  public static void write(String uri, long from, long to, boolean stableRowIds, boolean create) {
    writeWide(uri, from, to, stableRowIds, create, false, false);
  }

  /**
   * {@link #write} with a vector column {@code vec} (value {@code sin(id * (j + 1) / 1000)} in
   * dimension {@code j}) and/or a blob column {@code data} ({@code 'blob-' || id}).
   */
  public static void writeWide(String uri, long from, long to, boolean stableRowIds,
      boolean create, boolean vector, boolean blob) {
    try (BufferAllocator a = new RootAllocator();
        Rows rows = new Rows(a, from, to, vector, blob)) {
      Dataset.write().allocator(a).reader(rows).uri(uri).enableStableRowIds(stableRowIds)
          .mode(create ? WriteParams.WriteMode.CREATE : WriteParams.WriteMode.APPEND)
          .execute().close();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Deletes the rows matching a Lance SQL predicate (a new deletion file per fragment). */
  public static void delete(String uri, String predicate) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      ds.delete(predicate);
    }
  }

  /** Rewrites every fragment with its deleted rows dropped (row-id sequences get holes). */
  public static void compactDroppingDeletions(String uri) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true)
          .withMaterializeDeletionsThreshold(0.0f).withTargetRowsPerFragment(1L << 30).build());
    }
  }

  /** One fragment of {@code rows} rows with stable row ids and one in 1,000 deleted. */
  public static String withDeletions(String uri, long rows) {
    write(uri, 0, rows, true, true);
    delete(uri, "id % 1000 = 7");
    return uri;
  }

  /** {@link #withDeletions}, then compacted: no deletion file, a row-id sequence with holes. */
  public static String rewritten(String uri, long rows) {
    withDeletions(uri, rows);
    compactDroppingDeletions(uri);
    return uri;
  }

  /** Generated batches of 8,192 rows. */
  private static final class Rows extends ArrowReader {
    private long next;
    private final long end;
    private final boolean vector;
    private final boolean blob;

    Rows(BufferAllocator a, long from, long to, boolean vector, boolean blob) {
      super(a);
      this.next = from;
      this.end = to;
      this.vector = vector;
      this.blob = blob;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      if (next >= end) {
        return false;
      }
      VectorSchemaRoot r = getVectorSchemaRoot();
      int n = (int) Math.min(8192, end - next);
      BigIntVector id = (BigIntVector) r.getVector("id");
      IntVector k = (IntVector) r.getVector("k");
      Float8Vector v = (Float8Vector) r.getVector("v");
      VarCharVector name = (VarCharVector) r.getVector("name");
      id.allocateNew(n);
      k.allocateNew(n);
      v.allocateNew(n);
      name.allocateNew(n * 16L, n);
      FixedSizeListVector vec = vector ? (FixedSizeListVector) r.getVector("vec") : null;
      Float4Vector items = null;
      if (vec != null) {
        vec.allocateNew();
        items = (Float4Vector) vec.getDataVector();
        items.allocateNew(n * 4);
      }
      LargeVarBinaryVector data = blob ? (LargeVarBinaryVector) r.getVector("data") : null;
      if (data != null) {
        data.allocateNew(n);
      }
      for (int i = 0; i < n; i++) {
        long x = next + i;
        id.set(i, x);
        k.set(i, (int) (x % 1000));
        v.set(i, x * 0.5);
        name.setSafe(i, ("name" + x).getBytes(StandardCharsets.UTF_8));
        if (vec != null) {
          vec.setNotNull(i);
          for (int j = 0; j < 4; j++) {
            items.setSafe(i * 4 + j, (float) Math.sin(x * (j + 1) * 0.001));
          }
        }
        if (data != null) {
          data.setSafe(i, ("blob-" + x).getBytes(StandardCharsets.UTF_8));
        }
      }
      if (vec != null) {
        vec.setValueCount(n);
        items.setValueCount(n * 4);
      }
      if (data != null) {
        data.setValueCount(n);
      }
      r.setRowCount(n);
      next += n;
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
      return schema(vector, blob);
    }
  }
}
