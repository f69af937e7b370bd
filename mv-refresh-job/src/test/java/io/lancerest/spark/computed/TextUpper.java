package io.lancerest.spark.computed;

import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** A test column function with a STRING output: its one input in upper case. */
public class TextUpper implements ColumnFunction {
  @Override
  public DataType outputType(Map<String, String> options, StructType inputSchema) {
    return DataTypes.StringType;
  }

  @Override
  public List<?> compute(List<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(r.isNullAt(0) ? null : r.get(0).toString().toUpperCase(Locale.ROOT));
    }
    return out;
  }
}
