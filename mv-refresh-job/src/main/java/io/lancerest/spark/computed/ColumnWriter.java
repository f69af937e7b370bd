package io.lancerest.spark.computed;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The new data of a computed column for one fragment: a vector of the fragment's physical rows,
 * filled at row positions in increasing order (unset positions stay NULL), each value checked
 * against the column's type.
 */
final class ColumnWriter implements AutoCloseable {
  private final FieldVector vector;
  private final Field field;
  private final int vectorSize;

  ColumnWriter(Field field, BufferAllocator allocator, int rows) {
    this.field = field;
    this.vector = field.createVector(allocator);
    this.vectorSize = field.getType() instanceof ArrowType.FixedSizeList l ? l.getListSize() : -1;
    vector.setInitialCapacity(rows);
    vector.allocateNew();
  }

  FieldVector vector() {
    return vector;
  }

  /**
   * Sets the value at {@code pos}; {@code null} leaves it NULL.
   *
   * @return {@code null}, or what is wrong with {@code value} (for the caller's message)
   */
  String set(int pos, Object value) {
    if (value == null) {
      return null;
    }
    if (vector instanceof FixedSizeListVector list) {
      float[] f = floats(value);
      if (f == null) {
        return "a " + value.getClass().getName() + " where a vector of " + vectorSize
            + " floats (float[] or a list of floats) was expected";
      }
      if (f.length != vectorSize) {
        return "a vector of " + f.length + " floats where the column holds " + vectorSize;
      }
      Float4Vector items = (Float4Vector) list.getDataVector();
      list.setNotNull(pos);
      int base = pos * vectorSize;
      for (int i = 0; i < f.length; i++) {
        items.setSafe(base + i, f[i]);
      }
      return null;
    }
    if (vector instanceof VarCharVector v) {
      if (!(value instanceof CharSequence)
          && !(value instanceof org.apache.arrow.vector.util.Text)) {
        return wrong(value, "String");
      }
      v.setSafe(pos, value.toString().getBytes(StandardCharsets.UTF_8));
    } else if (vector instanceof BigIntVector v) {
      if (!(value instanceof Long) && !(value instanceof Integer)) {
        return wrong(value, "Long");
      }
      v.setSafe(pos, ((Number) value).longValue());
    } else if (vector instanceof IntVector v) {
      if (!(value instanceof Integer)) {
        return wrong(value, "Integer");
      }
      v.setSafe(pos, (Integer) value);
    } else if (vector instanceof Float8Vector v) {
      if (!(value instanceof Double) && !(value instanceof Float)) {
        return wrong(value, "Double");
      }
      v.setSafe(pos, ((Number) value).doubleValue());
    } else if (vector instanceof Float4Vector v) {
      if (!(value instanceof Float)) {
        return wrong(value, "Float");
      }
      v.setSafe(pos, (Float) value);
    } else if (vector instanceof BitVector v) {
      if (!(value instanceof Boolean)) {
        return wrong(value, "Boolean");
      }
      v.setSafe(pos, ((Boolean) value) ? 1 : 0);
    } else {
      throw new IllegalStateException("unsupported vector " + vector.getClass());
    }
    return null;
  }

  void finish(int rows) {
    vector.setValueCount(rows);
  }

  private static float[] floats(Object value) {
    if (value instanceof float[] f) {
      return f;
    }
    if (value instanceof List<?> l) {
      float[] f = new float[l.size()];
      for (int i = 0; i < f.length; i++) {
        if (!(l.get(i) instanceof Number n)) {
          return null;
        }
        f[i] = n.floatValue();
      }
      return f;
    }
    return null;
  }

  private String wrong(Object value, String expected) {
    return "a " + value.getClass().getName() + " where a " + expected + " was expected";
  }

  String columnName() {
    return field.getName();
  }

  @Override
  public void close() {
    vector.close();
  }
}
