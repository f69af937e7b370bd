package io.lancerest.spark.computed;

import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * One input column of a computed column's function, read from Arrow and handed over with
 * Spark's external Java types ({@code String}, {@code java.sql.Date}, {@code
 * java.sql.Timestamp}, {@code BigDecimal}, a Scala {@code Seq} for an array), as the {@link
 * io.lancerest.spark.mv.function.ColumnFunction} contract says; a fixed-size list of floats (a
 * vector) as a {@code float[]}.
 */
final class InputColumn {
  private final DataType type;
  private final scala.Function1<Object, Object> toExternal;

  private InputColumn(DataType type) {
    this.type = type;
    this.toExternal = CatalystTypeConverters.createToScalaConverter(type);
  }

  static InputColumn of(Field field) {
    return new InputColumn(LanceArrowUtils.fromArrowField(field));
  }

  /**
   * Row {@code i} of {@code v}, or {@code null}.
   *
   * @param row the same row as Spark reads the batch ({@link FragmentBackfill#columnar})
   * @param ordinal this column's place in {@code row}
   */
  Object value(FieldVector v, InternalRow row, int ordinal, int i) {
    if (v.isNull(i)) {
      return null;
    }
    if (v instanceof FixedSizeListVector) {
      return FragmentBackfill.value(v, i);
    }
    // Spark's reading of the Arrow value (dates as days, timestamps as micros, ...), then its
    // conversion to the external type a Row holds
    return toExternal.apply(row.get(ordinal, type));
  }
}
