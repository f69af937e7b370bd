package io.lancerest.spark.computed;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType$;
import org.apache.spark.sql.types.FloatType$;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.StringType$;
import java.util.List;
import java.util.Map;

/**
 * The column types a computed column may have, as Spark and Arrow see them: BOOLEAN, INT, BIGINT,
 * FLOAT, DOUBLE, STRING, and vectors ({@code ARRAY<FLOAT>} of a fixed size, stored as an Arrow
 * fixed-size list of float32 so that a vector index can be built on it).
 */
public final class ColumnTypes {
  private ColumnTypes() {}

  /** Whether {@code t} is a type a computed column may have (a vector checked apart). */
  public static boolean supported(DataType t) {
    return t == BooleanType$.MODULE$ || t == IntegerType$.MODULE$ || t == LongType$.MODULE$
        || t == FloatType$.MODULE$ || t == DoubleType$.MODULE$ || t == StringType$.MODULE$
        || isVector(t);
  }

  /** {@code ARRAY<FLOAT>}. */
  public static boolean isVector(DataType t) {
    return t instanceof ArrayType a && a.elementType() == FloatType$.MODULE$;
  }

  /**
   * The nullable Arrow field of the column.
   *
   * @param vectorSize the vector's length for {@code ARRAY<FLOAT>}
   */
  public static Field arrowField(String name, DataType t, Integer vectorSize,
      Map<String, String> metadata) {
    if (isVector(t)) {
      Field item = new Field("item", FieldType.nullable(
          new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE)),
          null);
      return new Field(name, new FieldType(true, new ArrowType.FixedSizeList(vectorSize), null,
          metadata), List.of(item));
    }
    ArrowType a;
    if (t == BooleanType$.MODULE$) {
      a = ArrowType.Bool.INSTANCE;
    } else if (t == IntegerType$.MODULE$) {
      a = new ArrowType.Int(32, true);
    } else if (t == LongType$.MODULE$) {
      a = new ArrowType.Int(64, true);
    } else if (t == FloatType$.MODULE$) {
      a = new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE);
    } else if (t == DoubleType$.MODULE$) {
      a = new ArrowType.FloatingPoint(org.apache.arrow.vector.types.FloatingPointPrecision.DOUBLE);
    } else if (t == StringType$.MODULE$) {
      a = ArrowType.Utf8.INSTANCE;
    } else {
      throw new IllegalArgumentException("unsupported computed column type " + t.sql());
    }
    return new Field(name, new FieldType(true, a, null, metadata), null);
  }
}
