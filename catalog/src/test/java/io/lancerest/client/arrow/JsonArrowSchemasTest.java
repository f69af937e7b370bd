package io.lancerest.client.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lancerest.client.LanceJson;
import io.lancerest.client.model.JsonArrowSchema;
import io.lancerest.client.model.JsonArrowDataType;
import io.lancerest.client.model.JsonArrowField;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The spec's JSON schema and Arrow schemas map onto each other, for every type both know. */
class JsonArrowSchemasTest {
  private static Field f(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.nullable(type), List.of(children));
  }

  private static Field required(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.notNullable(type), List.of(children));
  }

  /** One field of every type the converter supports, nested types included. */
  private static final Schema ALL = new Schema(List.of(
      f("n", ArrowType.Null.INSTANCE),
      required("b", ArrowType.Bool.INSTANCE),
      f("i8", new ArrowType.Int(8, true)), f("i16", new ArrowType.Int(16, true)),
      f("i32", new ArrowType.Int(32, true)), f("i64", new ArrowType.Int(64, true)),
      f("u8", new ArrowType.Int(8, false)), f("u16", new ArrowType.Int(16, false)),
      f("u32", new ArrowType.Int(32, false)), f("u64", new ArrowType.Int(64, false)),
      f("f16", new ArrowType.FloatingPoint(FloatingPointPrecision.HALF)),
      f("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
      f("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      f("s", ArrowType.Utf8.INSTANCE), f("ls", ArrowType.LargeUtf8.INSTANCE),
      f("bin", ArrowType.Binary.INSTANCE), f("lbin", ArrowType.LargeBinary.INSTANCE),
      f("fsb", new ArrowType.FixedSizeBinary(16)),
      f("d32", new ArrowType.Date(DateUnit.DAY)), f("d64", new ArrowType.Date(DateUnit.MILLISECOND)),
      f("ts", JsonArrowSchemas.DEFAULT_TIMESTAMP),
      f("dec", new ArrowType.Decimal(38, 9, 128)), f("dec256", new ArrowType.Decimal(60, 4, 256)),
      f("l", ArrowType.List.INSTANCE, f("item", new ArrowType.Int(32, true))),
      f("ll", ArrowType.LargeList.INSTANCE, f("item", ArrowType.Utf8.INSTANCE)),
      f("vec", new ArrowType.FixedSizeList(128),
          required("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE))),
      f("st", ArrowType.Struct.INSTANCE, f("x", ArrowType.Utf8.INSTANCE),
          f("y", ArrowType.Struct.INSTANCE, f("z", ArrowType.Bool.INSTANCE))),
      f("m", new ArrowType.Map(false), required("entries", ArrowType.Struct.INSTANCE,
          required("key", ArrowType.Utf8.INSTANCE), f("value", new ArrowType.Int(64, true))))),
      Map.of("owner", "ana"));

  @Test
  void everySupportedTypeSurvivesArrowToJsonToArrow() throws Exception {
    JsonArrowSchema json = JsonArrowSchemas.fromArrow(ALL);
    // Through the wire form too, as DescribeTable hands it over.
    String wire = LanceJson.mapper().writeValueAsString(json);
    JsonArrowSchema read = LanceJson.mapper().readValue(wire, JsonArrowSchema.class);

    Schema back = JsonArrowSchemas.toArrow(read);

    assertEquals(ALL.getFields().size(), back.getFields().size());
    for (int i = 0; i < ALL.getFields().size(); i++) {
      assertEquals(ALL.getFields().get(i), back.getFields().get(i), ALL.getFields().get(i)
          .getName());
    }
    assertEquals(ALL.getCustomMetadata(), back.getCustomMetadata());
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({"boolean, bool", "string, utf8", "large_string, large_utf8", "halffloat, float16",
      "float, float32", "double, float64", "INT32, int32"})
  void aliasesReadAsTheCanonicalType(String alias, String canonical) {
    Field a = JsonArrowSchemas.toArrow(
        new JsonArrowField().name("c").type(new JsonArrowDataType().type(alias)).nullable(true));
    Field c = JsonArrowSchemas.toArrow(
        new JsonArrowField().name("c").type(new JsonArrowDataType().type(canonical))
            .nullable(true));
    assertEquals(c, a);
  }

  @Test
  void unknownTypeNameIsAClearError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> JsonArrowSchemas.toArrow(new JsonArrowField().name("when")
            .type(new JsonArrowDataType().type("interval_month_day_nano")).nullable(true)));
    assertEquals("Field 'when' has JSON Arrow type 'interval_month_day_nano', which this client "
        + "does not know", e.getMessage().substring(0, e.getMessage().indexOf("know") + 4));
  }

  @Test
  void arrowTypeTheJsonSchemaCannotExpressIsAClearError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> JsonArrowSchemas.fromArrow(f("dur", new ArrowType.Duration(
            org.apache.arrow.vector.types.TimeUnit.SECOND))));
    assertEquals("Field 'dur' has Arrow type Duration(SECOND), which the JSON schema of the spec "
        + "cannot express", e.getMessage());
  }
}
