package io.lancerest.spark.computed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.computed.spark.ComputedColumns;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Adding a computed column through the Java API: one commit of an all-NULL column, or none. */
class ComputedColumnAddTest {
  private static EngineFixture f;
  private static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    ns = f.namespace("cc_add");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private String table(String name) {
    f.sql("CREATE TABLE lance." + ns + "." + name + " (id BIGINT, text STRING, n INT)");
    f.sql("INSERT INTO lance." + ns + "." + name + " VALUES (1, 'a', 1), (2, 'bb', 2), "
        + "(3, NULL, 3)");
    return "lance." + ns + "." + name;
  }

  private static ComputedColumnSpec spec(String column, String cls, DataType type,
      List<String> in, Map<String, String> options) {
    return new ComputedColumnSpec(column, cls, type, in, options, false);
  }

  @Test
  void addsAnAllNullColumnWithItsDefinitionAndNoData() {
    String t = table("added");
    long before = ComputedTables.version(f, ns, "added");
    List<String> rowsBefore = f.rows("SELECT id, text, n FROM " + t);
    ComputedColumn def = ComputedColumns.add(f.spark, t, spec("len", TextLength.class.getName(),
        null, List.of("text"), Map.of("plus", "1")));

    assertEquals(before + 1, ComputedTables.version(f, ns, "added"), "one commit");
    assertEquals(List.of("1|a|1|null", "2|bb|2|null", "3|null|3|null"),
        f.rows("SELECT id, text, n, len FROM " + t));
    assertEquals(rowsBefore, f.rows("SELECT id, text, n FROM " + t));
    ComputedColumn stored = ComputedColumn.fromMetadata(t, "len",
        ComputedTables.fieldMetadata(f, ns, "added", "len"));
    assertEquals(def, stored);
    assertEquals(List.of("text"), stored.inputColumns());
    assertEquals(Map.of("plus", "1"), stored.function().options());
    assertEquals(TextLength.class.getName(), stored.function().className());
    assertEquals("bigint", f.spark.table(t).schema().apply("len").dataType().sql()
        .toLowerCase(java.util.Locale.ROOT));
    assertEquals(0L, (long) ComputedTables.at(f, ns, "added", ds -> ds.getFragments().stream()
        .flatMap(fr -> fr.metadata().getFiles().stream())
        .filter(df -> df.getFields().length == 1 && df.getFields()[0] == 3).count()),
        "no data file holds the new column");
  }

  @Test
  void aVectorColumnIsAFixedSizeListOfFloats() {
    String t = table("vec");
    ComputedColumns.add(f.spark, t, spec("emb", TextVector4.class.getName(), null,
        List.of("text"), Map.of()));
    ArrowType type = ComputedTables.at(f, ns, "vec",
        ds -> ds.getSchema().findField("emb").getType());
    assertEquals(new ArrowType.FixedSizeList(4), type);
    assertEquals(3L, f.sql("SELECT count(*) FROM " + t + " WHERE emb IS NULL").get(0)
        .getLong(0));
  }

  @Test
  void badDefinitionsAreRefusedAndNothingIsCommitted() {
    String t = table("refused");
    long before = ComputedTables.version(f, ns, "refused");
    String len = TextLength.class.getName();
    assertRefused(t, spec("len", len, null, List.of("txt"), Map.of()),
        "Computed column 'len' of table " + t + ": input column 'txt' does not exist. The "
            + "table's columns are [id, text, n].");
    assertRefused(t, spec("len", "com.example.Missing", null, List.of("text"), Map.of()),
        "Computed column 'len' of table " + t + ": function class 'com.example.Missing' cannot "
            + "be loaded (java.lang.ClassNotFoundException: com.example.Missing). Put its jar "
            + "on the driver's and executors' classpath (--jars) or correct the class name.");
    assertRefused(t, spec("len", NotAFunction.class.getName(), null, List.of("text"), Map.of()),
        "Computed column 'len' of table " + t + ": class '" + NotAFunction.class.getName()
            + "' does not implement io.lancerest.spark.mv.function.ColumnFunction; a computed "
            + "column needs a 1:1 column function.");
    assertRefused(t, spec("len", len, null, List.of("text"), Map.of("plus", "x")),
        "Computed column 'len' of table " + t + ": its function " + len + " refused the "
            + "definition: option plus = 'x' must be a whole number");
    assertRefused(t, spec("len", len, null, List.of("n"), Map.of()),
        "Computed column 'len' of table " + t + ": its function " + len + " refused the "
            + "definition: TextLength reads one STRING column, got struct<n:int>");
    assertRefused(t, spec("len", len, DataTypes.StringType, List.of("text"), Map.of()),
        "Computed column 'len' of table " + t + ": declared type STRING does not agree with "
            + "its function's output type BIGINT. Declare BIGINT or leave the type out.");
    assertRefused(t, spec("text", len, null, List.of("text"), Map.of()),
        "Computed column 'text' of table " + t + ": the table already has a column 'text'. "
            + "Choose another name, or drop that column first.");
    assertRefused(t, spec("emb", TextVector4.class.getName(), DataTypes.LongType,
        List.of("text"), Map.of()), "Computed column 'emb' of table " + t + ": declared type "
            + "BIGINT does not agree with its function's output type ARRAY<FLOAT>. Declare "
            + "ARRAY<FLOAT> or leave the type out.");
    assertEquals(before, ComputedTables.version(f, ns, "refused"), "nothing was committed");
    assertEquals(List.of("id", "text", "n"), List.of(f.spark.table(t).columns()));
  }

  private void assertRefused(String t, ComputedColumnSpec s, String message) {
    ComputedColumnException e = assertThrows(ComputedColumnException.class,
        () -> ComputedColumns.add(f.spark, t, s));
    assertEquals(message, e.getMessage());
    assertTrue(e.getMessage().contains(t));
  }
}
