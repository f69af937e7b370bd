package io.lancerest.spark.mv.udtf;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Checks a UDTF's output rows against the declared output schema before they are encoded, so a
 * mismatch is reported with the column's name instead of as an encoder failure deep in Spark.
 */
final class OutputRows {
  private OutputRows() {}

  /**
   * @param where names the function and partition for the message, e.g. {@code "UDTF 'topk'
   *     (com.acme.TopK) for partition category='books'"}
   * @param vectorSizes each column's vector size (a fixed-size list in the view table), or 0
   */
  static void check(Row row, StructType schema, int[] vectorSizes, String where) {
    if (row == null) {
      throw new UdtfOutputMismatchException(where + " returned a null row");
    }
    StructField[] fields = schema.fields();
    if (row.length() != fields.length) {
      String first = fields.length > row.length() ? "; the first missing column is '"
          + fields[row.length()].name() + "'" : "";
      throw new UdtfOutputMismatchException(where + " returned a row of " + row.length()
          + " values, but the declared output schema has " + fields.length + " columns "
          + java.util.Arrays.toString(schema.fieldNames()) + first);
    }
    StructType named = row.schema();
    for (int i = 0; i < fields.length; i++) {
      StructField f = fields[i];
      if (named != null && !named.fields()[i].name().equals(f.name())) {
        throw new UdtfOutputMismatchException(where + " returned column '"
            + named.fields()[i].name() + "' at position " + i + " where the declared output "
            + "schema has column '" + f.name() + "'");
      }
      Object v = row.get(i);
      if (v == null) {
        if (!f.nullable()) {
          throw new UdtfOutputMismatchException(where + " returned NULL for column '" + f.name()
              + "', which the declared output schema says is not nullable");
        }
        continue;
      }
      String expected = expected(f.dataType(), v);
      if (expected != null) {
        throw new UdtfOutputMismatchException(where + " returned " + v.getClass().getName()
            + " for column '" + f.name() + "'; the declared output schema says "
            + f.dataType().simpleString() + ", which needs " + expected);
      }
      if (vectorSizes[i] > 0) {
        checkVector(v, f.name(), vectorSizes[i], where);
      }
    }
  }

  /**
   * A vector column's value must have exactly {@code size} elements, none NULL: lance-core
   * refuses another length only as the batch is encoded, without the column's name, and would
   * store a NULL element as a vector no search can rank.
   */
  private static void checkVector(Object v, String column, int size, String where) {
    List<?> items = v instanceof scala.collection.Seq<?> seq
        ? scala.collection.JavaConverters.seqAsJavaList(seq)
        : v instanceof List<?> list ? list : arrayItems(v);
    String problem = items.size() != size ? items.size() + " elements"
        : items.contains(null) ? "a NULL element at position " + items.indexOf(null) : null;
    if (problem != null) {
      throw new UdtfOutputMismatchException(where + " returned " + problem + " for column '"
          + column + "', a vector of " + size + " floats in the view. Make the function return "
          + size + " non-NULL floats (or NULL) for it, or declare another size");
    }
  }

  private static List<Object> arrayItems(Object array) {
    int n = java.lang.reflect.Array.getLength(array);
    List<Object> out = new java.util.ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(java.lang.reflect.Array.get(array, i));
    }
    return out;
  }

  /** {@code null} when {@code v} is an accepted external value for {@code t}; else the need. */
  private static String expected(DataType t, Object v) {
    if (t instanceof BooleanType) {
      return v instanceof Boolean ? null : "java.lang.Boolean";
    } else if (t instanceof ByteType) {
      return v instanceof Byte ? null : "java.lang.Byte";
    } else if (t instanceof ShortType) {
      return v instanceof Short ? null : "java.lang.Short";
    } else if (t instanceof IntegerType) {
      return v instanceof Integer ? null : "java.lang.Integer";
    } else if (t instanceof LongType) {
      return v instanceof Long ? null : "java.lang.Long";
    } else if (t instanceof FloatType) {
      return v instanceof Float ? null : "java.lang.Float";
    } else if (t instanceof DoubleType) {
      return v instanceof Double ? null : "java.lang.Double";
    } else if (t instanceof StringType) {
      return v instanceof String ? null : "java.lang.String";
    } else if (t instanceof BinaryType) {
      return v instanceof byte[] ? null : "byte[]";
    } else if (t instanceof DecimalType) {
      return v instanceof BigDecimal || v instanceof org.apache.spark.sql.types.Decimal
          ? null : "java.math.BigDecimal";
    } else if (t instanceof DateType) {
      return v instanceof java.sql.Date || v instanceof LocalDate ? null
          : "java.sql.Date or java.time.LocalDate";
    } else if (t instanceof TimestampType) {
      return v instanceof java.sql.Timestamp || v instanceof Instant ? null
          : "java.sql.Timestamp or java.time.Instant";
    } else if (t instanceof TimestampNTZType) {
      return v instanceof LocalDateTime ? null : "java.time.LocalDateTime";
    } else if (t instanceof ArrayType) {
      return v instanceof scala.collection.Seq || v instanceof java.util.List
          || v.getClass().isArray() ? null : "an array, java.util.List or scala Seq";
    } else if (t instanceof MapType) {
      return v instanceof scala.collection.Map || v instanceof Map ? null
          : "java.util.Map or scala Map";
    } else if (t instanceof StructType) {
      return v instanceof Row ? null : "org.apache.spark.sql.Row";
    }
    return null; // other types: left to Spark's encoder
  }
}
