package io.lancerest.spark.mv.chunker;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.Row;

/**
 * Writes Spark external values (what a {@link Chunker} emits) into Arrow vectors, checking each
 * value against the column's declared type. A mismatch is reported with the column path so the
 * user sees which output is wrong.
 *
 * <p>Query views write through lance-spark's {@code LanceArrowWriter}; chunkers cannot without a
 * cost: it takes Catalyst rows, so every child would first go through an encoder (a copy per
 * row), and a value of the wrong type fails in that encoder with a message naming the Java type
 * but neither the column path nor the parent. The chunker's output is user code's: the checks
 * here are the error its author gets.
 */
final class ArrowSetters {
  private ArrowSetters() {}

  /** A value does not fit its column; {@code path} names the column (and nested field). */
  static final class Mismatch extends RuntimeException {
    final String path;

    Mismatch(String path, String message) {
      super(message, null, false, false);
      this.path = path;
    }
  }

  /** Sets row {@code i} of its vector to a value (or null). */
  interface Setter {
    void set(FieldVector v, int i, Object value);
  }

  static Setter forField(Field f, String path) {
    Setter nonNull = valueSetter(f, path);
    boolean nullable = f.isNullable();
    return (v, i, value) -> {
      if (value == null) {
        if (!nullable) {
          throw new Mismatch(path, "null in non-nullable column '" + path + "'");
        }
        setNull(v, i);
        return;
      }
      nonNull.set(v, i, value);
    };
  }

  /**
   * {@code setter} of a vector column (a fixed-size list) that also refuses a NULL element: a
   * function's output vector with one would be stored as a vector no search can rank. (A
   * column copied from the source is written as the source has it.)
   */
  static Setter noNullElements(Setter setter, Field f, String path) {
    int size = ((ArrowType.FixedSizeList) f.getType()).getListSize();
    return (v, i, value) -> {
      if (value != null) {
        List<?> items = asList(value, path, f);
        int at = items.indexOf(null);
        if (at >= 0) {
          throw new Mismatch(path, "a NULL element at position " + at + " for column '" + path
              + "', a vector of " + size + " floats");
        }
      }
      setter.set(v, i, value);
    };
  }

  private static void setNull(FieldVector v, int i) {
    if (v instanceof ListVector l) {
      l.setNull(i);
    } else if (v instanceof StructVector s) {
      s.setNull(i);
    } else if (v instanceof FixedSizeListVector fl) {
      fl.setNull(i);
    } else if (v instanceof BaseFixedWidthVector b) {
      b.setNull(i);
    } else if (v instanceof BaseVariableWidthVector b) {
      b.setNull(i);
    } else if (v instanceof BaseLargeVariableWidthVector b) {
      b.setNull(i);
    } else {
      throw new Mismatch(v.getName(), "cannot write null to a " + v.getClass().getSimpleName());
    }
  }

  private static Mismatch wrongType(String path, Field f, Object value) {
    return new Mismatch(path, "a " + value.getClass().getName() + " for column '" + path
        + "' declared " + f.getType());
  }

  private static Setter valueSetter(Field f, String path) {
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Bool:
        return (v, i, x) -> {
          if (!(x instanceof Boolean b)) {
            throw wrongType(path, f, x);
          }
          ((BitVector) v).setSafe(i, b ? 1 : 0);
        };
      case Int: {
        int bits = ((ArrowType.Int) t).getBitWidth();
        return switch (bits) {
          case 8 -> (v, i, x) -> {
            if (!(x instanceof Byte b)) {
              throw wrongType(path, f, x);
            }
            ((TinyIntVector) v).setSafe(i, b);
          };
          case 16 -> (v, i, x) -> {
            if (!(x instanceof Short s)) {
              throw wrongType(path, f, x);
            }
            ((SmallIntVector) v).setSafe(i, s);
          };
          case 32 -> (v, i, x) -> {
            if (!(x instanceof Integer n)) {
              throw wrongType(path, f, x);
            }
            ((IntVector) v).setSafe(i, n);
          };
          default -> (v, i, x) -> {
            if (!(x instanceof Long n)) {
              throw wrongType(path, f, x);
            }
            ((BigIntVector) v).setSafe(i, n);
          };
        };
      }
      case FloatingPoint:
        if (((ArrowType.FloatingPoint) t).getPrecision()
            == org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE) {
          return (v, i, x) -> {
            if (!(x instanceof Float n)) {
              throw wrongType(path, f, x);
            }
            ((Float4Vector) v).setSafe(i, n);
          };
        }
        return (v, i, x) -> {
          if (!(x instanceof Double n)) {
            throw wrongType(path, f, x);
          }
          ((Float8Vector) v).setSafe(i, n);
        };
      case Utf8:
        return (v, i, x) -> {
          if (!(x instanceof String s)) {
            throw wrongType(path, f, x);
          }
          ((VarCharVector) v).setSafe(i, s.getBytes(StandardCharsets.UTF_8));
        };
      case LargeUtf8:
        return (v, i, x) -> {
          if (!(x instanceof String s)) {
            throw wrongType(path, f, x);
          }
          ((LargeVarCharVector) v).setSafe(i, s.getBytes(StandardCharsets.UTF_8));
        };
      case Binary:
        return (v, i, x) -> {
          if (!(x instanceof byte[] b)) {
            throw wrongType(path, f, x);
          }
          ((VarBinaryVector) v).setSafe(i, b);
        };
      case LargeBinary:
        return (v, i, x) -> {
          if (!(x instanceof byte[] b)) {
            throw wrongType(path, f, x);
          }
          ((LargeVarBinaryVector) v).setSafe(i, b);
        };
      case Date:
        return (v, i, x) -> {
          long day;
          if (x instanceof java.sql.Date d) {
            day = d.toLocalDate().toEpochDay();
          } else if (x instanceof LocalDate d) {
            day = d.toEpochDay();
          } else {
            throw wrongType(path, f, x);
          }
          ((DateDayVector) v).setSafe(i, (int) day);
        };
      case Timestamp: {
        ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
        if (ts.getUnit() != TimeUnit.MICROSECOND) {
          return unsupported(path, f);
        }
        return (v, i, x) -> {
          Instant at;
          if (x instanceof java.sql.Timestamp s) {
            at = s.toInstant();
          } else if (x instanceof Instant s) {
            at = s;
          } else if (x instanceof LocalDateTime s) {
            at = s.toInstant(ZoneOffset.UTC);
          } else {
            throw wrongType(path, f, x);
          }
          long micros = Math.addExact(Math.multiplyExact(at.getEpochSecond(), 1_000_000L),
              at.getNano() / 1_000);
          ((TimeStampVector) v).setSafe(i, micros);
        };
      }
      case List: {
        Field child = f.getChildren().get(0);
        Setter elem = forField(child, path + ".element");
        return (v, i, x) -> {
          List<?> items = asList(x, path, f);
          ListVector l = (ListVector) v;
          int start = l.startNewValue(i);
          FieldVector data = l.getDataVector();
          for (int j = 0; j < items.size(); j++) {
            elem.set(data, start + j, items.get(j));
          }
          l.endValue(i, items.size());
        };
      }
      case FixedSizeList: {
        Field child = f.getChildren().get(0);
        int size = ((ArrowType.FixedSizeList) t).getListSize();
        Setter elem = forField(child, path + ".element");
        return (v, i, x) -> {
          List<?> items = asList(x, path, f);
          if (items.size() != size) {
            throw new Mismatch(path, items.size() + " elements for column '" + path
                + "' declared as a fixed-size list of " + size);
          }
          FixedSizeListVector l = (FixedSizeListVector) v;
          l.setNotNull(i);
          FieldVector data = l.getDataVector();
          for (int j = 0; j < size; j++) {
            elem.set(data, i * size + j, items.get(j));
          }
        };
      }
      case Struct: {
        List<Field> children = f.getChildren();
        List<Setter> setters = new ArrayList<>();
        for (Field c : children) {
          setters.add(forField(c, path + "." + c.getName()));
        }
        return (v, i, x) -> {
          if (!(x instanceof Row r)) {
            throw wrongType(path, f, x);
          }
          if (r.length() != children.size()) {
            throw new Mismatch(path, r.length() + " fields for struct column '" + path
                + "' declared with " + children.size());
          }
          StructVector s = (StructVector) v;
          s.setIndexDefined(i);
          for (int c = 0; c < children.size(); c++) {
            setters.get(c).set((FieldVector) s.getChildByOrdinal(c), i, r.get(c));
          }
        };
      }
      default:
        return unsupported(path, f);
    }
  }

  private static Setter unsupported(String path, Field f) {
    return (v, i, x) -> {
      throw new Mismatch(path, "column '" + path + "' has type " + f.getType()
          + ", which chunker views do not support yet");
    };
  }

  private static List<?> asList(Object x, String path, Field f) {
    if (x instanceof List<?> l) {
      return l;
    }
    if (x instanceof Object[] a) {
      return Arrays.asList(a);
    }
    if (x instanceof scala.collection.Seq<?> s) {
      return scala.collection.JavaConverters.seqAsJavaList(s);
    }
    throw wrongType(path, f, x);
  }

  /** Rough heap/arrow footprint of a value, to bound a batch by bytes as well as rows. */
  static long estimateBytes(Object x) {
    if (x == null) {
      return 1;
    }
    if (x instanceof String s) {
      return s.length() + 16L;
    }
    if (x instanceof byte[] b) {
      return b.length + 16L;
    }
    if (x instanceof List<?> l) {
      long n = 16;
      for (Object o : l) {
        n += estimateBytes(o);
      }
      return n;
    }
    if (x instanceof Row r) {
      long n = 16;
      for (int i = 0; i < r.length(); i++) {
        n += estimateBytes(r.get(i));
      }
      return n;
    }
    return 8;
  }
}
