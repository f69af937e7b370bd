package io.lancerest.spark.computed;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.DataType;

/**
 * What a user asks for when adding a computed column, before it is checked.
 *
 * @param column the new column's name
 * @param className the {@link io.lancerest.spark.mv.function.ColumnFunction} class
 * @param declaredType the column's type as declared, or {@code null} to take the function's
 *     {@code outputType}; a vector is {@code ARRAY<FLOAT>} with its size from {@code vectorSize}
 * @param inputColumns the table's columns passed to the function, in order
 * @param options the function's options
 * @param autoBackfill stored with the definition (the engine does not act on it yet)
 */
public record ComputedColumnSpec(String column, String className, DataType declaredType,
    List<String> inputColumns, Map<String, String> options, boolean autoBackfill) {
  public ComputedColumnSpec {
    inputColumns = inputColumns == null ? List.of() : List.copyOf(inputColumns);
    options = options == null ? Map.of() : Map.copyOf(options);
  }
}
