package io.lancerest.spark.computed;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.util.Text;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.fragment.DataFile;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * The work of one backfill task: reads one fragment's input columns (an unfiltered scan with
 * {@code _rowaddr}, linear for every fragment state), calls the function in batches, and writes
 * the column's values for every physical row of the fragment as one new data file, not
 * committed. Rows whose inputs are all NULL get NULL without a call; rows a {@code where} does not
 * match keep their current value; deleted rows get NULL.
 */
public final class FragmentBackfill {
  private static final String ROW_ADDRESS = "_rowaddr";
  /** Rows a {@code where} keeps, held at most this many before they are written out. */
  private static final int KEPT_FLUSH = 8192;

  private FragmentBackfill() {}

  /** Computes {@code task}'s fragment. */
  public static FragmentResult run(BackfillTaskSpec spec, FragmentTask task) {
    return runAll(spec, List.of(task)).get(0);
  }

  /**
   * Computes {@code tasks}' fragments one after another with one opened instance of the
   * function: a function holding a model loads it once for them all, not once per fragment.
   */
  public static List<FragmentResult> runAll(BackfillTaskSpec spec, List<FragmentTask> tasks) {
    ComputedColumn def = ComputedColumn.fromMetadata(spec.table(), spec.column(),
        java.util.Map.of(ComputedColumn.METADATA_KEY, spec.definition()));
    String where = "Backfill of computed column '" + spec.column() + "' of table " + spec.table();
    LanceLocation location = LanceLocation.of(spec.uri(), spec.storageOptions());
    List<FragmentResult> out = new ArrayList<>();
    FragmentTask current = null;
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = location.open(a, spec.readVersion());
        ColumnFunction fn = ColumnFunctions.instantiate(def.function().className(), where)) {
      try {
        fn.open(def.function().options());
      } catch (Exception e) {
        throw new ComputedColumnException(where + ": its function "
            + def.function().className() + " failed to open: " + e + ". Check its options and "
            + "that its jar and resources are on the executors' classpath; nothing of this "
            + "group was committed.", e);
      }
      for (FragmentTask task : tasks) {
        current = task;
        out.add(compute(spec, task, def, fn, ds, location, a, where));
      }
      return out;
    } catch (ComputedColumnException e) {
      throw e;
    } catch (Exception e) {
      throw new ComputedColumnException(where + ": " + (current == null ? "" : "fragment "
          + current.fragmentId() + " ") + "failed: " + e + ". Backfill again to resume: "
          + "fragments already committed are kept.", e);
    }
  }

  private static FragmentResult compute(BackfillTaskSpec spec, FragmentTask task,
      ComputedColumn def, ColumnFunction fn, Dataset ds, LanceLocation location,
      BufferAllocator a, String where) throws Exception {
    RowCondition cond = spec.condition();
    Set<String> read = new LinkedHashSet<>(def.inputColumns());
    if (cond != null) {
      read.addAll(cond.columns());
      read.add(spec.column()); // rows that do not match keep their value
    }
    List<String> cols = new ArrayList<>(read);
    cols.add(ROW_ADDRESS);
    Field stored = ds.getSchema().findField(spec.column());
    Field plain = new Field(stored.getName(), new FieldType(true, stored.getType(), null, null),
        stored.getChildren());
    List<InputColumn> inputs = new ArrayList<>();
    for (String in : def.inputColumns()) {
      inputs.add(InputColumn.of(ds.getSchema().findField(in)));
    }
    int rows = Math.toIntExact(task.physicalRows());
    long computed = 0;
    long skipped = 0;
    boolean complete = true;
    boolean wrote = false;
    BackfillOptions o = spec.options();
    try (ColumnWriter out = new ColumnWriter(plain, a, rows)) {
      Batch pending = new Batch();
      ScanOptions.Builder b = new ScanOptions.Builder().fragmentIds(List.of(task.fragmentId()))
          .columns(cols).batchSize(Math.max(o.batchSize(), 1024));
      try (LanceScanner s = ds.newScan(b.build()); ArrowReader reader = s.scanBatches()) {
        while (reader.loadNextBatch()) {
          VectorSchemaRoot root = reader.getVectorSchemaRoot();
          ColumnarBatch condRows = cond == null ? null : columnar(root, cond.columns());
          ColumnarBatch inRows = columnar(root, def.inputColumns());
          FieldVector addr = root.getVector(ROW_ADDRESS);
          for (int i = 0; i < root.getRowCount(); i++) {
            int pos = (int) (((Number) addr.getObject(i)).longValue() & 0xffffffffL);
            if (cond != null && !cond.test(condRows.getRow(i))) {
              complete = false;
              // kept in position order with the rows waiting for the function: the writer
              // takes positions in increasing order only
              pending.keep(pos, value(root.getVector(spec.column()), i));
              if (pending.entries() >= KEPT_FLUSH) {
                skipped += pending.flush(fn, out, o, where, task);
              }
              continue;
            }
            wrote = true;
            Object[] in = new Object[def.inputColumns().size()];
            org.apache.spark.sql.catalyst.InternalRow inRow = inRows.getRow(i);
            boolean allNull = true;
            for (int c = 0; c < in.length; c++) {
              in[c] = inputs.get(c).value(root.getVector(def.inputColumns().get(c)), inRow, c, i);
              allNull &= in[c] == null;
            }
            computed++;
            if (allNull) {
              continue; // NULL inputs give NULL, without a call
            }
            pending.add(pos, RowFactory.create(in));
            if (pending.size() >= o.batchSize()) {
              skipped += pending.flush(fn, out, o, where, task);
            }
          }
        }
      }
      skipped += pending.flush(fn, out, o, where, task);
      if (!wrote) {
        return new FragmentResult(task.fragmentId(), null, 0, 0, false);
      }
      out.finish(rows);
      DataFile file = write(location, spec, out.vector(), a, where, task);
      // skipped rows stay NULL: the fragment is not done, so the next backfill tries them again
      return new FragmentResult(task.fragmentId(), file, computed - skipped, skipped,
          complete && skipped == 0);
    }
  }

  private static DataFile write(LanceLocation location, BackfillTaskSpec spec, FieldVector v,
      BufferAllocator a, String where, FragmentTask task) {
    List<FragmentMetadata> written;
    try (VectorSchemaRoot root = new VectorSchemaRoot(List.of(v))) {
      written = location.fragments().datasetUri(spec.uri()).allocator(a).data(root)
          .maxRowsPerFile(Integer.MAX_VALUE).execute();
    }
    if (written.size() != 1 || written.get(0).getFiles().size() != 1
        || written.get(0).getPhysicalRows() != task.physicalRows()) {
      throw new ComputedColumnException(where + ": lance-core wrote fragment "
          + task.fragmentId() + "'s column as " + written.size() + " fragment(s) instead of one "
          + "file of " + task.physicalRows() + " rows; nothing of it was committed.");
    }
    DataFile f = written.get(0).getFiles().get(0);
    // lance-core numbers a new file's fields from 0; the table knows the column by its own id
    return new DataFile(f.getPath(), new int[] {spec.fieldId()}, new int[] {0},
        f.getFileMajorVersion(), f.getFileMinorVersion(), f.getFileSizeBytes(), null);
  }

  static ColumnarBatch columnar(VectorSchemaRoot root, List<String> names) {
    ColumnVector[] v = new ColumnVector[names.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = new org.lance.spark.vectorized.LanceArrowColumnVector(root.getVector(names.get(i)));
    }
    return new ColumnarBatch(v, root.getRowCount());
  }

  /** Row {@code i} of {@code v} with the external types functions get. */
  static Object value(FieldVector v, int i) {
    if (v.isNull(i)) {
      return null;
    }
    if (v instanceof FixedSizeListVector l) {
      List<?> items = l.getObject(i);
      float[] f = new float[items.size()];
      for (int k = 0; k < f.length; k++) {
        f[k] = ((Number) items.get(k)).floatValue();
      }
      return f;
    }
    Object o = v.getObject(i);
    return o instanceof Text t ? t.toString() : o;
  }

  private static void check(String problem, String where, FragmentTask task, int pos) {
    if (problem != null) {
      throw new ComputedColumnException(where + ": row " + pos + " of fragment "
          + task.fragmentId() + ": the function returned " + problem + ". Fix the function "
          + "(or the column's declared type) and backfill again: fragments already committed "
          + "are kept.");
    }
  }

  /**
   * Rows waiting for one call of the function, and, between them, rows a {@code where} keeps
   * with their current value: written in the order they were read, which is position order.
   */
  private static final class Batch {
    /** Per entry, in read order: its position; its kept value, or {@link #COMPUTED}. */
    private static final Object COMPUTED = new Object();
    private final List<Integer> positions = new ArrayList<>();
    private final List<Object> kept = new ArrayList<>();
    private final List<Row> rows = new ArrayList<>();

    void add(int pos, Row r) {
      positions.add(pos);
      kept.add(COMPUTED);
      rows.add(r);
    }

    void keep(int pos, Object value) {
      positions.add(pos);
      kept.add(value);
    }

    /** Rows for the function. */
    int size() {
      return rows.size();
    }

    /** Rows for the function and rows kept. */
    int entries() {
      return positions.size();
    }

    /** Calls the function and sets the values, kept ones too; returns the rows skipped. */
    long flush(ColumnFunction fn, ColumnWriter out, BackfillOptions o, String where,
        FragmentTask task) {
      if (positions.isEmpty()) {
        return 0;
      }
      List<?> values = rows.isEmpty() ? List.of() : call(fn, o, where, task);
      long skipped = values == null ? rows.size() : 0; // skipped rows stay NULL
      int next = 0;
      for (int e = 0; e < positions.size(); e++) {
        int pos = positions.get(e);
        Object k = kept.get(e);
        if (k != COMPUTED) {
          check(out.set(pos, k), where, task, pos);
        } else if (values != null) {
          check(out.set(pos, values.get(next++)), where, task, pos);
        }
      }
      positions.clear();
      kept.clear();
      rows.clear();
      return skipped;
    }

    /** The function's values for {@link #rows}, or {@code null} when skipped. */
    private List<?> call(ColumnFunction fn, BackfillOptions o, String where, FragmentTask task) {
      List<?> values = null;
      int attempts = o.errorHandling() == BackfillOptions.ErrorMode.RETRY ? 1 + o.retries() : 1;
      Exception last = null;
      for (int k = 0; k < attempts && values == null; k++) {
        try {
          values = fn.compute(rows);
          if (values == null) {
            throw new ComputedColumnException(where + ": the function returned null for a "
                + "batch of " + rows.size() + " rows of fragment " + task.fragmentId()
                + "; it must return one value per row. Fix the function and backfill again.");
          }
        } catch (ComputedColumnException e) {
          throw e;
        } catch (Exception e) {
          last = e;
        }
      }
      if (values == null) {
        if (o.errorHandling() != BackfillOptions.ErrorMode.SKIP) {
          int first = firstComputed();
          int lastPos = lastComputed();
          throw new ComputedColumnException(where + ": the function failed on fragment "
              + task.fragmentId() + " (rows " + first + ".." + lastPos + ")" + (attempts > 1
              ? " after " + attempts + " attempts" : "") + ": " + last + ". Fix the function or "
              + "its options and backfill again: fragments already committed are kept, or use "
              + "error_handling = 'skip'.", last);
        }
        return null;
      }
      if (values.size() != rows.size()) {
        throw new ComputedColumnException(where + ": the function returned " + values.size()
            + " values for " + rows.size() + " rows of fragment " + task.fragmentId()
            + "; it must return exactly one value per row. Fix the function and backfill "
            + "again: fragments already committed are kept.");
      }
      return values;
    }

    private int firstComputed() {
      for (int e = 0; e < kept.size(); e++) {
        if (kept.get(e) == COMPUTED) {
          return positions.get(e);
        }
      }
      return -1;
    }

    private int lastComputed() {
      for (int e = kept.size() - 1; e >= 0; e--) {
        if (kept.get(e) == COMPUTED) {
          return positions.get(e);
        }
      }
      return -1;
    }
  }
}
