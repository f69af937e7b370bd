package io.lancerest.spark.computed;

import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A test vector function: 4 floats from a text (length, first char, last char, char sum mod 97);
 * option {@code size} makes it return another length (a function that breaks its promise).
 */
public class TextVector4 implements ColumnFunction {
  private int size;

  @Override
  public DataType outputType(Map<String, String> options, StructType inputSchema) {
    return DataTypes.createArrayType(DataTypes.FloatType);
  }

  @Override
  public Integer vectorSize(Map<String, String> options) {
    return 4;
  }

  @Override
  public void open(Map<String, String> options) {
    size = Integer.parseInt(options.getOrDefault("size", "4"));
  }

  /** The value for {@code s}, as the test computes it too. */
  static float[] of(String s) {
    int sum = 0;
    for (char c : s.toCharArray()) {
      sum += c;
    }
    return new float[] {s.length(), s.isEmpty() ? 0 : s.charAt(0),
        s.isEmpty() ? 0 : s.charAt(s.length() - 1), sum % 97};
  }

  @Override
  public List<?> compute(List<Row> rows) {
    List<float[]> out = new ArrayList<>();
    for (Row r : rows) {
      float[] v = of(r.getString(0));
      out.add(size == 4 ? v : java.util.Arrays.copyOf(v, size));
    }
    return out;
  }
}
