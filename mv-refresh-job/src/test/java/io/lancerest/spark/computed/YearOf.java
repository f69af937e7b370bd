package io.lancerest.spark.computed;

import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** A test function on Spark's external types: year(date) * 10000 + hour(timestamp). */
public class YearOf implements ColumnFunction {
  @Override
  public DataType outputType(Map<String, String> options, StructType inputSchema) {
    return DataTypes.IntegerType;
  }

  @Override
  public List<?> compute(List<Row> rows) {
    List<Integer> out = new ArrayList<>();
    for (Row r : rows) {
      java.sql.Date d = r.getDate(0);
      java.sql.Timestamp ts = r.getTimestamp(1);
      out.add((d == null ? 0 : d.toLocalDate().getYear() * 10000)
          + (ts == null ? 0 : ts.toLocalDateTime().getHour()));
    }
    return out;
  }
}
