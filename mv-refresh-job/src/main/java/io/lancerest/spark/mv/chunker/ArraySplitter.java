package io.lancerest.spark.mv.chunker;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
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
 * element).
 */
public class ArraySplitter implements Chunker {
  private int size;

  public ArraySplitter() {}

  @Override
  public void open(ChunkerContext context) {
    size = context.intOption("size", 0);
    if (size <= 0) {
      throw new IllegalArgumentException("ArraySplitter needs a positive option 'size'");
    }
    arrayType(context.inputSchema());
  }

  private static ArrayType arrayType(StructType input) {
    if (input.fields().length == 0 || !(input.fields()[0].dataType() instanceof ArrayType a)) {
      throw new IllegalArgumentException("ArraySplitter needs an array as its first input "
          + "column, got " + input.simpleString());
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
