package io.lancerest.spark.computed;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * Calls the function once, on the driver, on a few rows of the first fragment a backfill
 * computes, before anything is committed: a function whose values do not fit the column (a wrong
 * type, a vector of another length, not one value per row) is refused with nothing committed,
 * instead of failing in a later commit group after the earlier ones landed. A function that
 * throws here is left to the backfill's {@code error_handling}.
 */
final class OutputProbe {
  /** Rows of the first fragment the probe reads at most. */
  static final int ROWS = 16;

  private OutputProbe() {}

  static void check(BackfillTaskSpec spec, ComputedColumn def, FragmentTask first,
      String where) {
    LanceLocation location = LanceLocation.of(spec.uri(), spec.storageOptions());
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = location.open(a, spec.readVersion())) {
      List<Row> rows = sample(ds, def, first, where);
      if (rows.isEmpty()) {
        return;
      }
      List<?> values;
      try (ColumnFunction fn = ColumnFunctions.instantiate(def.function().className(), where)) {
        fn.open(def.function().options());
        values = fn.compute(rows);
      } catch (ComputedColumnException e) {
        throw e;
      } catch (Exception e) {
        return; // the backfill's error_handling decides what a throwing function does
      }
      String problem = values == null || values.size() != rows.size()
          ? (values == null ? "null" : values.size() + " values") + " for " + rows.size()
              + " rows (one value per row is expected)"
          : firstProblem(ds, spec, values, a);
      if (problem != null) {
        throw new ComputedColumnException(where + ": on " + rows.size() + " rows of fragment "
            + first.fragmentId() + ", tried before anything was committed, the function "
            + "returned " + problem + ". Fix the function (or the column's declared type) and "
            + "backfill again; nothing was committed.");
      }
    }
  }

  /** Up to {@link #ROWS} rows of {@code first} whose inputs are not all NULL. */
  private static List<Row> sample(Dataset ds, ComputedColumn def, FragmentTask first,
      String where) {
    List<InputColumn> inputs = new ArrayList<>();
    for (String in : def.inputColumns()) {
      inputs.add(InputColumn.of(ds.getSchema().findField(in)));
    }
    List<Row> rows = new ArrayList<>();
    ScanOptions o = new ScanOptions.Builder().fragmentIds(List.of(first.fragmentId()))
        .columns(def.inputColumns()).batchSize(256).build();
    try (LanceScanner s = ds.newScan(o); ArrowReader reader = s.scanBatches()) {
      while (rows.size() < ROWS && reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        ColumnarBatch in = FragmentBackfill.columnar(root, def.inputColumns());
        for (int i = 0; i < root.getRowCount() && rows.size() < ROWS; i++) {
          Object[] v = new Object[inputs.size()];
          boolean allNull = true;
          for (int c = 0; c < v.length; c++) {
            v[c] = inputs.get(c).value(root.getVector(def.inputColumns().get(c)),
                in.getRow(i), c, i);
            allNull &= v[c] == null;
          }
          if (!allNull) {
            rows.add(RowFactory.create(v));
          }
        }
      }
    } catch (Exception e) { // lance-core's IOException arrives undeclared too
      throw new ComputedColumnException(where + ": reading fragment " + first.fragmentId()
          + " failed: " + e.getMessage() + ". Nothing was committed; backfill again.", e);
    }
    return rows;
  }

  /** What is wrong with the first value that does not fit the column, or {@code null}. */
  private static String firstProblem(Dataset ds, BackfillTaskSpec spec, List<?> values,
      BufferAllocator a) {
    Field stored = ds.getSchema().findField(spec.column());
    Field plain = new Field(stored.getName(), new FieldType(true, stored.getType(), null, null),
        stored.getChildren());
    try (ColumnWriter w = new ColumnWriter(plain, a, values.size())) {
      for (int i = 0; i < values.size(); i++) {
        String p = w.set(i, values.get(i));
        if (p != null) {
          return p;
        }
      }
    }
    return null;
  }
}
