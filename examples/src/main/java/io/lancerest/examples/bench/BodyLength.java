package io.lancerest.examples.bench;

import io.lancerest.spark.mv.function.ColumnFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * {@link BackfillBenchmark}'s cheap column function: the length of {@code body} (inputs {@code
 * id, body}), what Spark's {@code length(body)} gives for its ASCII texts. Option {@code
 * fail_at_id}: a batch holding that id throws, so that the benchmark can stop a backfill part
 * way, as a killed job would, and then backfill again without the option.
 */
public class BodyLength implements ColumnFunction {
  @Override
  public DataType outputType(Map<String, String> options, StructType inputSchema) {
    return DataTypes.IntegerType;
  }

  @Override
  public List<?> compute(List<Row> rows) {
    List<Integer> out = new ArrayList<>(rows.size());
    for (Row r : rows) {
      out.add(r.isNullAt(1) ? null : r.getString(1).length());
    }
    return out;
  }
}
