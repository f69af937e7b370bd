package io.lancerest.spark.mv.driver;

import io.lancerest.spark.connector.read.FragmentHazard;
import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.connector.read.TableFragments;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.spark.vectorized.LanceArrowColumnVector;

/**
 * Reads some fragments of a source with lance-core and runs a {@link CompiledDefinition} over
 * their rows, as the Spark path's tasks run it over lance-spark's scan of the same fragments.
 *
 * <p>Lance is handed the very SQL filter lance-spark hands it for the parts it pushes down
 * (Lance evaluates those with its own semantics, e.g. it orders -0.0 below 0.0, and Spark never
 * checks them again); the rows are seen as Spark rows through lance-spark's own Arrow column
 * vectors. Wherever the rows could differ from the Spark path's, the scan declines ({@link
 * Declined}) before the caller has written anything: a column lance-core does not give by name
 * or gives with another Spark type, a blob column (lance-spark reads its descriptors), fragments
 * a compaction rewrote when the compiled stages leave the filter to Lance, an expression that
 * fails on a row (the Spark path then reports it as usual).
 */
public final class DriverScan {
  private static final int BATCH_ROWS = 8192;

  private DriverScan() {}

  /** Takes each row the definition outputs; it may throw {@link Declined} to stop the scan. */
  @FunctionalInterface
  public interface RowHandler {
    void accept(UnsafeRow projected);
  }

  /**
   * What a scan read.
   *
   * @param rowsRead rows the scan gave (after the filter Lance applies)
   * @param rowsOut rows the definition output (after its own filters)
   * @param computeNanos time spent filtering, projecting and in the handler
   */
  public record Stats(long rowsRead, long rowsOut, long computeNanos) {}

  /**
   * Runs {@code c} over {@code fragments} of {@code src}, in fragment order.
   *
   * @throws Declined when the rows might differ from the Spark path's, or the handler declines
   */
  public static Stats scan(org.lance.Dataset src, CompiledDefinition c, List<Integer> fragments,
      RowHandler handler) {
    if (c.empty() || fragments.isEmpty()) {
      return new Stats(0, 0, 0);
    }
    try {
      return read(src, c, fragments, handler);
    } catch (Declined d) {
      throw d;
    } catch (Exception e) {
      // Nothing was written: the Spark path reads the same fragments and reports what fails.
      throw new Declined("reading fragments " + fragments + " on the driver failed ("
          + firstLine(e) + ")");
    }
  }

  private static Stats read(org.lance.Dataset src, CompiledDefinition c, List<Integer> fragments,
      RowHandler handler) throws Exception {
    List<String> columns = new ArrayList<>();
    List<DataType> types = new ArrayList<>();
    for (Attribute a : c.input()) {
      columns.add(a.name());
      types.add(a.dataType());
    }
    Map<String, Field> dataFields = new HashMap<>();
    for (Field f : src.getSchema().getFields()) {
      dataFields.put(f.getName(), f);
    }
    for (String col : columns) {
      Field f = dataFields.get(col);
      if (f == null && !CompiledDefinition.META.contains(col)) {
        throw new Declined("the definition reads column " + col + ", which lance-core does not "
            + "give by name");
      }
      if (f != null && f.getMetadata() != null
          && f.getMetadata().containsKey(LanceArrowUtils.ENCODING_BLOB())) {
        throw new Declined("the definition reads blob column " + col);
      }
    }
    if (c.lanceFilter() != null && !c.lanceFilterAlsoInStages()) {
      // Fragments lance-core must not filter (rewritten by a compaction, FragmentHazard) are
      // read unfiltered; that is only right when the compiled stages evaluate the pushed
      // filters too, which a plan compiled before the compaction does not.
      TableFragments hz = TableFragments.of(src);
      if (hz.hazard(fragments) == FragmentHazard.REWRITTEN_ROW_IDS) {
        throw new Declined("fragments " + hz.with(FragmentHazard.REWRITTEN_ROW_IDS) + " were "
            + "rewritten by a compaction, and the compiled definition leaves its filter to Lance");
      }
    }
    // No scalar index: lance-spark scans fragment by fragment and evaluates the filter on every
    // row; an index (possibly covering only some fragments) must not decide here.
    SafeLanceScan.Request req = SafeLanceScan.Request.of(fragments, columns)
        .withFilter(c.lanceFilter()).withBatchSize(BATCH_ROWS).withoutScalarIndex();
    Counter n = new Counter(c, handler);
    boolean[] checked = {false};
    SafeLanceScan.scan(src, req, b -> {
      long s = System.nanoTime();
      ColumnVector[] vectors = new ColumnVector[columns.size()];
      for (int i = 0; i < vectors.length; i++) {
        if (columns.get(i).equals("_rowid")) {
          vectors[i] = b.rowIdColumn();
          continue;
        }
        FieldVector v = b.column(columns.get(i));
        if (v == null) {
          throw new Declined("the lance-core scan gave no column " + columns.get(i));
        }
        if (!checked[0]) {
          DataType got = LanceArrowUtils.fromArrowField(v.getField());
          if (!got.equals(types.get(i))) {
            throw new Declined("column " + columns.get(i) + " reads as " + got.simpleString()
                + " from lance-core but as " + types.get(i).simpleString()
                + " through lance-spark");
          }
        }
        vectors[i] = new LanceArrowColumnVector(v);
      }
      checked[0] = true;
      // not closed: the vectors belong to the reader
      ColumnarBatch batch = new ColumnarBatch(vectors, b.rowCount());
      try {
        int rows = batch.numRows();
        for (int i = 0; i < rows; i++) {
          n.accept(batch.getRow(i));
        }
      } catch (Declined d) {
        throw d;
      } catch (Exception e) {
        // (SparkException from a failing UDF is checked to javac, thrown all the same) e.g. a
        // UDF or an ANSI cast failing on a row: the Spark path computes the same expressions
        // and reports the failure as it always does
        throw new Declined("computing the rows on the driver failed (" + firstLine(e) + ")");
      }
      n.nanos += System.nanoTime() - s;
    });
    return new Stats(n.read, n.out, n.nanos);
  }

  /**
   * One row at a time, in a method rather than a loop body: the JIT compiles a method called for
   * every row within the first refresh, while the read loop, run once per refresh, is compiled
   * only after several refreshes; until then every call in its body runs interpreted.
   */
  private static final class Counter {
    private final CompiledDefinition c;
    private final RowHandler handler;
    long read;
    long out;
    long nanos;

    Counter(CompiledDefinition c, RowHandler handler) {
      this.c = c;
      this.handler = handler;
    }

    void accept(InternalRow in) {
      read++;
      UnsafeRow row = c.apply(in);
      if (row != null) {
        out++;
        handler.accept(row);
      }
    }
  }

  /** The first line of {@code e}: enough for a log line, without a multi-line plan or trace. */
  public static String firstLine(Exception e) {
    return e.toString().lines().findFirst().orElse("");
  }
}
