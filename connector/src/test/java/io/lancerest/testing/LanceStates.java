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
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.compaction.CompactionOptions;

/**
 * Lance datasets in the fragment states of {@code FragmentHazard}, written with lance-core alone:
 * rows {@code (id BIGINT, k INT = id % 1000, v DOUBLE = id / 2, name STRING = 'name' || id)}.
 */
public final class LanceStates {
  private LanceStates() {}

  public static Schema schema() {
    return new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true)),
        Field.nullable("k", new ArrowType.Int(32, true)),
        Field.nullable("v", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        Field.nullable("name", new ArrowType.Utf8())));
  }

  /** Writes ids {@code [from, to)}: creates the dataset, or appends when it exists. */
  public static void write(String uri, long from, long to, boolean stableRowIds, boolean create) {
    try (BufferAllocator a = new RootAllocator(); Rows rows = new Rows(a, from, to)) {
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

    Rows(BufferAllocator a, long from, long to) {
      super(a);
      this.next = from;
      this.end = to;
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
      for (int i = 0; i < n; i++) {
        long x = next + i;
        id.set(i, x);
        k.set(i, (int) (x % 1000));
        v.set(i, x * 0.5);
        name.setSafe(i, ("name" + x).getBytes(StandardCharsets.UTF_8));
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
      return schema();
    }
  }
}
