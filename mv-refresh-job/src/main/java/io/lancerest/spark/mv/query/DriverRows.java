package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.read.SafeLanceScan;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.spark.vectorized.LanceArrowColumnVector;

/**
 * Rows of some fragments of a Lance dataset read on the driver with lance-core, as Spark rows of
 * the types lance-spark gives: a plain scan through the guard ({@link SafeLanceScan}: no filter
 * handed to Lance, no {@code _rowid}), for the small reads of an aggregate view's refresh, where
 * a Spark job's tasks would each open the dataset for a few rows.
 */
final class DriverRows {
  private DriverRows() {}

  /**
   * The rows of {@code fragments} ({@code null}: all) whose row address {@code keep} accepts,
   * with {@code columns}, then the row address as a last column when {@code withAddress};
   * {@code null} when a column reads with another type than {@code columns} gives (the caller
   * then reads through lance-spark).
   */
  static List<Row> read(org.lance.Dataset ds, List<Integer> fragments, StructType columns,
      boolean withAddress, LongPredicate keep) throws Exception {
    List<String> names = List.of(columns.fieldNames());
    scala.Function1<Object, Object> toRow =
        CatalystTypeConverters.createToScalaConverter(columns);
    List<Row> rows = new ArrayList<>();
    boolean[] differ = {false};
    SafeLanceScan.Request req = SafeLanceScan.Request.of(fragments, names).withRowAddresses()
        .withoutScalarIndex();
    SafeLanceScan.scan(ds, req, b -> {
      if (differ[0]) {
        return;
      }
      ColumnVector[] vectors = new ColumnVector[names.size()];
      for (int i = 0; i < vectors.length; i++) {
        FieldVector v = b.column(names.get(i));
        DataType got = v == null ? null : LanceArrowUtils.fromArrowField(v.getField());
        if (got == null || !got.equals(columns.fields()[i].dataType())) {
          differ[0] = true;
          return;
        }
        vectors[i] = new LanceArrowColumnVector(v);
      }
      ColumnarBatch batch = new ColumnarBatch(vectors, b.rowCount());
      for (int r = 0; r < b.rowCount(); r++) {
        long address = b.rowAddress(r);
        if (!keep.test(address)) {
          continue;
        }
        Row row = (Row) toRow.apply(batch.getRow(r).copy());
        if (withAddress) {
          Object[] values = new Object[row.length() + 1];
          for (int i = 0; i < row.length(); i++) {
            values[i] = row.get(i);
          }
          values[row.length()] = address;
          row = RowFactory.create(values);
        }
        rows.add(row);
      }
    });
    return differ[0] ? null : rows;
  }
}
