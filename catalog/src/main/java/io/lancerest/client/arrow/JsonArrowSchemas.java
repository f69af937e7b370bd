package io.lancerest.client.arrow;

import io.lancerest.client.model.JsonArrowSchema;
import io.lancerest.client.model.JsonArrowDataType;
import io.lancerest.client.model.JsonArrowField;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Converts between the spec's {@code JsonArrowSchema} and Arrow's {@link Schema}.
 *
 * <p>The type names are the ones the upstream server emits (measured on lance-core 4.0.0):
 * {@code bool}, {@code int8}…{@code uint64}, {@code float16/32/64}, {@code utf8},
 * {@code large_utf8}, {@code binary}, {@code large_binary}, {@code fixed_size_binary} (with
 * {@code length}), {@code date32}, {@code date64}, {@code timestamp}, {@code decimal128}
 * (precision and scale packed into {@code length} as precision × 1000 + scale), {@code list},
 * {@code large_list}, {@code fixed_size_list} (with {@code length}), {@code struct} and
 * {@code map}, children in {@code fields}.
 *
 * <p>The JSON form drops a timestamp's unit and zone, so {@code timestamp} reads back as
 * microseconds in UTC, Spark's {@code TimestampType}.
 */
public final class JsonArrowSchemas {
  /** The unit and zone given to {@code timestamp}, which the JSON form does not carry. */
  public static final ArrowType.Timestamp DEFAULT_TIMESTAMP =
      new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
  private static final int DECIMAL_PACK = 1000;

  private JsonArrowSchemas() {}

  public static Schema toArrow(JsonArrowSchema json) {
    List<Field> fields = new ArrayList<>();
    for (JsonArrowField f : nonNull(json.getFields())) {
      fields.add(toArrow(f));
    }
    return new Schema(fields, json.getMetadata());
  }

  public static Field toArrow(JsonArrowField f) {
    JsonArrowDataType t = f.getType();
    if (t == null || t.getType() == null) {
      throw new IllegalArgumentException("Field '" + f.getName() + "' has no type");
    }
    List<Field> children = new ArrayList<>();
    for (JsonArrowField c : nonNull(t.getFields())) {
      children.add(toArrow(c));
    }
    ArrowType type = arrowType(f.getName(), t);
    // A field that leaves out 'nullable' is not nullable, as in Arrow's own JSON form.
    boolean nullable = Boolean.TRUE.equals(f.getNullable());
    return new Field(f.getName(), new FieldType(nullable, type, null, f.getMetadata()), children);
  }

  private static ArrowType arrowType(String field, JsonArrowDataType t) {
    String name = t.getType().toLowerCase(Locale.ROOT);
    return switch (name) {
      case "null" -> ArrowType.Null.INSTANCE;
      case "bool", "boolean" -> ArrowType.Bool.INSTANCE;
      case "int8" -> new ArrowType.Int(8, true);
      case "int16" -> new ArrowType.Int(16, true);
      case "int32" -> new ArrowType.Int(32, true);
      case "int64" -> new ArrowType.Int(64, true);
      case "uint8" -> new ArrowType.Int(8, false);
      case "uint16" -> new ArrowType.Int(16, false);
      case "uint32" -> new ArrowType.Int(32, false);
      case "uint64" -> new ArrowType.Int(64, false);
      case "float16", "halffloat" -> new ArrowType.FloatingPoint(FloatingPointPrecision.HALF);
      case "float32", "float" -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case "float64", "double" -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case "utf8", "string" -> ArrowType.Utf8.INSTANCE;
      case "large_utf8", "large_string" -> ArrowType.LargeUtf8.INSTANCE;
      case "binary" -> ArrowType.Binary.INSTANCE;
      case "large_binary" -> ArrowType.LargeBinary.INSTANCE;
      case "fixed_size_binary" -> new ArrowType.FixedSizeBinary(length(field, t));
      case "date32" -> new ArrowType.Date(DateUnit.DAY);
      case "date64" -> new ArrowType.Date(DateUnit.MILLISECOND);
      case "timestamp" -> DEFAULT_TIMESTAMP;
      case "decimal", "decimal128", "decimal256" -> {
        int packed = length(field, t);
        yield new ArrowType.Decimal(packed / DECIMAL_PACK, packed % DECIMAL_PACK,
            name.equals("decimal256") ? 256 : 128);
      }
      case "list" -> ArrowType.List.INSTANCE;
      case "large_list" -> ArrowType.LargeList.INSTANCE;
      case "fixed_size_list" -> new ArrowType.FixedSizeList(length(field, t));
      case "struct" -> ArrowType.Struct.INSTANCE;
      case "map" -> new ArrowType.Map(false);
      default -> throw new IllegalArgumentException(
          "Field '" + field + "' has JSON Arrow type '" + t.getType() + "', which this client "
              + "does not know");
    };
  }

  private static int length(String field, JsonArrowDataType t) {
    if (t.getLength() == null) {
      throw new IllegalArgumentException(
          "Field '" + field + "' of type " + t.getType() + " has no 'length'");
    }
    return Math.toIntExact(t.getLength());
  }

  public static JsonArrowSchema fromArrow(Schema schema) {
    List<JsonArrowField> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(fromArrow(f));
    }
    Map<String, String> md = schema.getCustomMetadata();
    return new JsonArrowSchema().fields(fields).metadata(md == null || md.isEmpty() ? null : md);
  }

  public static JsonArrowField fromArrow(Field f) {
    List<JsonArrowField> children = null;
    if (!f.getChildren().isEmpty()) {
      children = new ArrayList<>();
      for (Field c : f.getChildren()) {
        children.add(fromArrow(c));
      }
    }
    ArrowType t = f.getType();
    Long length = switch (t.getTypeID()) {
      case FixedSizeBinary -> (long) ((ArrowType.FixedSizeBinary) t).getByteWidth();
      case FixedSizeList -> (long) ((ArrowType.FixedSizeList) t).getListSize();
      case Decimal -> (long) ((ArrowType.Decimal) t).getPrecision() * DECIMAL_PACK
          + ((ArrowType.Decimal) t).getScale();
      default -> null;
    };
    Map<String, String> md = f.getMetadata();
    return new JsonArrowField().name(f.getName())
        .type(new JsonArrowDataType().type(typeName(f)).fields(children).length(length))
        .nullable(f.isNullable()).metadata(md == null || md.isEmpty() ? null : md);
  }

  private static String typeName(Field f) {
    ArrowType t = f.getType();
    return switch (t.getTypeID()) {
      case Null -> "null";
      case Bool -> "bool";
      case Int -> {
        ArrowType.Int i = (ArrowType.Int) t;
        yield (i.getIsSigned() ? "int" : "uint") + i.getBitWidth();
      }
      case FloatingPoint -> switch (((ArrowType.FloatingPoint) t).getPrecision()) {
        case HALF -> "float16";
        case SINGLE -> "float32";
        case DOUBLE -> "float64";
      };
      case Utf8 -> "utf8";
      case LargeUtf8 -> "large_utf8";
      case Binary -> "binary";
      case LargeBinary -> "large_binary";
      case FixedSizeBinary -> "fixed_size_binary";
      case Date -> ((ArrowType.Date) t).getUnit() == DateUnit.DAY ? "date32" : "date64";
      case Timestamp -> "timestamp";
      case Decimal -> ((ArrowType.Decimal) t).getBitWidth() == 256 ? "decimal256" : "decimal128";
      case List -> "list";
      case LargeList -> "large_list";
      case FixedSizeList -> "fixed_size_list";
      case Struct -> "struct";
      case Map -> "map";
      default -> throw new IllegalArgumentException("Field '" + f.getName() + "' has Arrow type "
          + t + ", which the JSON schema of the spec cannot express");
    };
  }

  private static <T> List<T> nonNull(List<T> l) {
    return l == null ? List.of() : l;
  }
}
