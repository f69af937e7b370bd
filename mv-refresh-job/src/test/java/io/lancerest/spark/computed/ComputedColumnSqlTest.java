package io.lancerest.spark.computed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The SQL of computed columns: ADD COLUMN ... COMPUTED BY and BACKFILL COLUMN. */
class ComputedColumnSqlTest {
  private static EngineFixture f;
  private static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    ns = f.namespace("cc_sql");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private String table(String name) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, text STRING)");
    f.sql("INSERT INTO " + t + " SELECT id, concat('t', repeat('x', CAST(id AS INT))) FROM "
        + "range(0, 12)");
    return t;
  }

  @Test
  void addThenBackfillWithWhereThenTheRest() {
    String t = table("sql_len");
    assertEquals(List.of(), f.sql("ALTER TABLE " + t + " ADD COLUMN len BIGINT COMPUTED BY '"
        + TextLength.class.getName() + "' (text) OPTIONS ('plus' = 2) "
        + "WITH (auto_backfill = true)"));
    ComputedColumn def = ComputedColumn.fromMetadata(t, "len",
        ComputedTables.fieldMetadata(f, ns, "sql_len", "len"));
    assertEquals(Map.of("plus", "2"), def.function().options());
    assertTrue(def.autoBackfill());

    List<Row> first = f.sql("ALTER TABLE " + t + " BACKFILL COLUMN len WHERE id < 5 AND "
        + "text LIKE 't%' WITH (batch_size = 2, error_handling = 'fail')");
    assertEquals(1, first.size());
    Row r = first.get(0);
    assertEquals(5L, (long) r.<Long>getAs("rows_computed"));
    assertEquals(0L, (long) r.<Long>getAs("rows_skipped"));
    assertEquals(List.of("0|3", "1|4", "2|5", "3|6", "4|7"),
        f.rows("SELECT id, len FROM " + t + " WHERE len IS NOT NULL"));

    Row nulls = f.sql("ALTER TABLE " + t + " BACKFILL COLUMN len WHERE len IS NULL "
        + "AND id <> 11").get(0);
    assertEquals(6L, (long) nulls.<Long>getAs("rows_computed"), "ids 5..10");
    assertEquals(List.of("11"), f.rows("SELECT CAST(id AS STRING) FROM " + t
        + " WHERE len IS NULL"));

    Row rest = f.sql("ALTER TABLE " + t + " BACKFILL COLUMN len").get(0);
    assertEquals(0L, (long) rest.<Long>getAs("rows_left_for_later"));
    assertEquals(0L, f.sql("SELECT count(*) FROM " + t + " WHERE len IS NULL "
        + "OR len <> length(text) + 2").get(0).getLong(0));
  }

  @Test
  void aDeclaredVectorTypeIsAFixedSizeList() {
    String t = table("sql_vec");
    f.sql("ALTER TABLE " + t + " ADD COLUMN emb ARRAY<FLOAT> COMPUTED BY '"
        + TextVector4.class.getName() + "' (text)");
    assertEquals(new ArrowType.FixedSizeList(4), ComputedTables.at(f, ns, "sql_vec",
        ds -> ds.getSchema().findField("emb").getType()));
    Row r = f.sql("ALTER TABLE " + t + " BACKFILL COLUMN emb WITH (commit_granularity = 1)")
        .get(0);
    assertEquals(12L, (long) r.<Long>getAs("rows_computed"));
    assertEquals(0L, f.sql("SELECT count(*) FROM " + t + " WHERE emb IS NULL").get(0)
        .getLong(0));
  }

  @Test
  void anOrdinaryAddColumnIsStillSparks() {
    String t = table("sql_plain");
    f.sql("ALTER TABLE " + t + " ADD COLUMN note STRING");
    assertNull(ComputedTables.fieldMetadata(f, ns, "sql_plain", "note")
        .get(ComputedColumn.METADATA_KEY));
    assertEquals(List.of("id", "text", "note"), List.of(f.spark.table(t).columns()));
  }

  @Test
  void badStatementsGetClearErrorsAndCommitNothing() {
    String t = table("sql_bad");
    f.sql("ALTER TABLE " + t + " ADD COLUMN len COMPUTED BY '" + TextLength.class.getName()
        + "' (text)");
    long before = ComputedTables.version(f, ns, "sql_bad");
    assertEquals("Backfill of column 'len' of table " + t + ": unknown option 'batchsize'. "
        + "Known options: batch_size, commit_granularity, read_version, error_handling, "
        + "retries, where.", assertThrows(ComputedColumnException.class, () -> f.sql(
            "ALTER TABLE " + t + " BACKFILL COLUMN len WITH (batchsize = 2)")).getMessage());
    String where = assertThrows(ComputedColumnException.class, () -> f.sql(
        "ALTER TABLE " + t + " BACKFILL COLUMN len WHERE id <")).getMessage();
    assertTrue(where.startsWith("Backfill of column 'len' of table " + t + ": WHERE id < is "
        + "not a condition on the table's columns: "), where);
    assertEquals("Backfill of column 'text' of table " + t + ": column 'text' is not a computed "
        + "column (its field metadata has no 'lancerest:computed'); only computed columns can "
        + "be backfilled.", assertThrows(ComputedColumnException.class, () -> f.sql(
            "ALTER TABLE " + t + " BACKFILL COLUMN text")).getMessage());
    assertEquals("Computed column 'x' of table " + t + ": WITH takes auto_backfill = true or "
        + "false, not 'batch_size' = '3'. Put the function's settings in OPTIONS (...).",
        assertThrows(ComputedColumnException.class, () -> f.sql("ALTER TABLE " + t
            + " ADD COLUMN x COMPUTED BY '" + TextLength.class.getName()
            + "' (text) WITH (batch_size = 3)")).getMessage());
    assertEquals(before, ComputedTables.version(f, ns, "sql_bad"));
  }
}
