package io.lancerest.spark.computed;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A test column function: the length of a string (BIGINT). Option {@code plus} adds to it (a
 * changed definition). A text equal to {@link #failOn} makes its batch throw, so that tests can
 * make a backfill fail at a chosen row and then "fix" the function.
 */
public class TextLength implements ColumnFunction {
  /** The text whose batch throws; {@code null}: none. Tests set it (one JVM in local mode). */
  static volatile String failOn;
  private long plus;

  @Override
  public void validate(Map<String, String> options, StructType inputSchema, DataType outputType) {
    String p = options.get("plus");
    if (p != null && !p.matches("-?\\d+")) {
      throw new InvalidOptionException("option plus = '" + p + "' must be a whole number");
    }
    if (inputSchema.size() != 1 || !inputSchema.fields()[0].dataType().equals(
        DataTypes.StringType)) {
      throw new InvalidOptionException("TextLength reads one STRING column, got "
          + inputSchema.simpleString());
    }
  }

  @Override
  public DataType outputType(Map<String, String> options, StructType inputSchema) {
    return DataTypes.LongType;
  }

  @Override
  public void open(Map<String, String> options) {
    plus = Long.parseLong(options.getOrDefault("plus", "0"));
  }

  @Override
  public List<?> compute(List<Row> rows) {
    List<Long> out = new ArrayList<>();
    for (Row r : rows) {
      String s = r.getString(0);
      if (s != null && s.equals(failOn)) {
        throw new IllegalStateException("cannot measure '" + s + "'");
      }
      out.add(s == null ? null : s.length() + plus);
    }
    return out;
  }
}
