package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.function.ChunkerContext;
import io.lancerest.spark.mv.function.OptionValues;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Cuts the array in the first input column into consecutive slices of {@code size} elements
 * (the last may be shorter); {@code USING CHUNKER 'io.lancerest.spark.mv.chunker.ArraySplitter'
 * OPTIONS (size = 16)}. A null or empty array yields no rows. Output columns: {@code items} (an
 * array of the input's element type) and {@code start int not null} (index of the slice's first
 * element). {@code size} is required; any other option is refused at CREATE.
 */
public class ArraySplitter implements Chunker {
  private static final String SIZE = "a positive whole number (elements per slice)";
  /** The options this class reads, plus the engine's inherit_input_columns. */
  private static final Set<String> OPTIONS = Set.of("size",
      ChunkerDefinition.INHERIT_INPUT_COLUMNS);

  private int size;

  public ArraySplitter() {}

  @Override
  public void validate(Map<String, String> options, StructType inputSchema) {
    OptionValues.onlyKnown(options, "ArraySplitter", OPTIONS);
    if (OptionValues.wholeNumber(options, "size", 1, SIZE) == null) {
      throw new InvalidOptionException("size", null, SIZE);
    }
    arrayType(inputSchema);
  }

  @Override
  public void open(ChunkerContext context) {
    validate(context.options(), context.inputSchema());
    size = OptionValues.wholeNumber(context.options(), "size", 1, SIZE);
  }

  private static ArrayType arrayType(StructType input) {
    if (input.fields().length == 0 || !(input.fields()[0].dataType() instanceof ArrayType a)) {
      throw new InvalidOptionException("ArraySplitter cuts its first input column, which must "
          + "be an array; its input columns are " + input.simpleString() + " (name the array "
          + "column first in input_columns)");
    }
    return a;
  }

  @Override
  public Iterator<Row> chunk(Row input) {
    if (input.isNullAt(0)) {
      return java.util.Collections.emptyIterator();
    }
    List<Object> values = input.getList(0);
    return new Iterator<>() {
      private int start;

      @Override
      public boolean hasNext() {
        return start < values.size();
      }

      @Override
      public Row next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        int end = Math.min(values.size(), start + size);
        Row r = RowFactory.create(new ArrayList<>(values.subList(start, end)), start);
        start = end;
        return r;
      }
    };
  }

  @Override
  public StructType outputSchema(Map<String, String> options, StructType inputSchema) {
    ArrayType a = arrayType(inputSchema);
    return new StructType()
        .add("items", DataTypes.createArrayType(a.elementType(), a.containsNull()), true)
        .add("start", DataTypes.IntegerType, false);
  }
}
