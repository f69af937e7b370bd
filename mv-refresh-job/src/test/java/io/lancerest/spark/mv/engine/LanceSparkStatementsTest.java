package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * lance-spark 0.4.0's own statements (its SQL extension, configured next to ours) on tables of
 * this catalog: OPTIMIZE, VACUUM, CREATE INDEX, SHOW INDEXES and the ADD COLUMNS backfill. They
 * ship the table's read options to Spark tasks with Kryo, which the catalog's immutable id and
 * storage-option collections broke.
 */
class LanceSparkStatementsTest {
  static EngineFixture f;
  static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("ls");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** {@code lance.<ns>.<name>} written by {@code inserts} INSERTs of 100 rows, a fragment each. */
  private static String table(String name, int inserts) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, name STRING)");
    for (int i = 0; i < inserts; i++) {
      f.sql("INSERT INTO " + t + " SELECT id + " + (i * 100) + ", concat('word', id % 7) FROM "
          + "range(0, 100, 1, 1)");
    }
    return t;
  }

  private static int fragments(String name) {
    return TableStats.fragments(f, ns, name);
  }

  private static int versions(String name) {
    return TableStats.versions(f, ns, name);
  }

  @Test
  void optimizeCompactsTheFragmentsAndKeepsTheRows() {
    String t = table("opt", 5);
    List<String> before = f.rows("SELECT * FROM " + t);
    assertEquals(5, fragments("opt"));
    Row r = f.sql("OPTIMIZE " + t).get(0);
    assertEquals(5L, ((Number) r.get(0)).longValue(), r.toString()); // fragments removed
    assertEquals(1L, ((Number) r.get(1)).longValue(), r.toString()); // fragments added
    assertEquals(1, fragments("opt"));
    assertEquals(before, f.rows("SELECT * FROM " + t));
  }

  @Test
  void vacuumRemovesOldVersionsAndKeepsTheRows() {
    String t = table("vac", 4);
    f.sql("OPTIMIZE " + t);
    List<String> before = f.rows("SELECT * FROM " + t);
    int versions = versions("vac");
    f.sql("VACUUM " + t);
    assertTrue(versions("vac") < versions, versions + " versions before, " + versions("vac")
        + " after");
    assertEquals(before, f.rows("SELECT * FROM " + t));
  }

  @Test
  void scalarAndFullTextIndexesAreCreatedAndListed() {
    String t = table("idx", 2);
    Row made = f.sql("ALTER TABLE " + t + " CREATE INDEX id_idx USING btree (id)").get(0);
    assertEquals("id_idx", made.getString(1), made.toString());
    f.sql("ALTER TABLE " + t + " CREATE INDEX name_idx USING fts (name) WITH (base_tokenizer = "
        + "'simple', language = 'English', max_token_length = 40, lower_case = true, stem = "
        + "false, remove_stop_words = false, ascii_folding = false, with_position = false)");
    List<String> shown = f.rows("SHOW INDEXES FROM " + t);
    assertEquals(2, shown.size(), shown.toString());
    // lance-spark 0.4.0 records no type for these in the manifest: their statistics name them
    assertEquals(List.of("id_idx|WrappedArray(id)|btree|2|200|0|0|1",
        "name_idx|WrappedArray(name)|inverted|2|200|0|0|1"), shown);
    assertEquals(List.of("150|word1"), f.rows("SELECT id, name FROM " + t + " WHERE id = 150"));
    // lance-spark 0.4.0 builds scalar and full-text indexes only; vector methods are our
    // extension's (VectorIndexSqlTest), which checks the column
    Exception e = assertThrows(Exception.class, () -> f.sql("ALTER TABLE " + t
        + " CREATE INDEX v_idx USING ivf_flat (id)"));
    assertTrue(String.valueOf(e.getMessage()).startsWith("Column 'id' of table " + t
        + " is BIGINT, not a vector"), e.toString());
  }

  @Test
  void aBackfilledColumnIsReadAfterRefreshTable() {
    String t = table("bf", 2);
    f.sql("CREATE OR REPLACE TEMPORARY VIEW bf_extra AS SELECT _rowaddr, _fragid, id * 2 AS "
        + "twice FROM " + t);
    f.sql("ALTER TABLE " + t + " ADD COLUMNS twice FROM bf_extra");
    // lance-spark changed the schema behind the catalog, whose cache (cache.ttl-ms) still holds
    // the old one: REFRESH TABLE drops it.
    f.sql("REFRESH TABLE " + t);
    assertEquals(List.of("150|300", "3|6"), f.rows("SELECT id, twice FROM " + t
        + " WHERE id IN (3, 150)"));
  }

  @Test
  void aBackfillIntoAViewIsRefusedAndOptimizeAndVacuumKeepTheViewRefreshable() {
    String t = table("vsrc", 3);
    String v = "lance." + ns + ".vv";
    String select = "SELECT id, name FROM " + t + " WHERE id % 2 = 0";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    f.sql("CREATE OR REPLACE TEMPORARY VIEW vv_extra AS SELECT _rowaddr, _fragid, id AS x FROM "
        + v);
    InvalidViewDefinitionException e = assertThrows(InvalidViewDefinitionException.class,
        () -> f.sql("ALTER TABLE " + v + " ADD COLUMNS x FROM vv_extra"));
    assertTrue(e.getMessage().startsWith("Table lance." + ns + ".vv is a materialized view: "),
        e.getMessage());
    // Spark's own column changes are refused by the catalog
    for (String change : List.of("DROP COLUMN name", "ADD COLUMNS (x INT)",
        "RENAME COLUMN name TO label")) {
      Exception c = assertThrows(Exception.class, () -> f.sql("ALTER TABLE " + v + " "
          + change));
      assertTrue(String.valueOf(c.getMessage()).contains(ns + ".vv is a materialized view: its "
          + "columns come from its definition"), change + ": " + c);
    }

    for (int i = 3; i < 6; i++) {
      f.sql("INSERT INTO " + t + " SELECT id + " + (i * 100) + ", 'late' FROM range(0, 50, 1, 1)");
      f.sql("REFRESH MATERIALIZED VIEW " + v);
    }
    int before = fragments("vv");
    f.sql("OPTIMIZE " + v);
    f.sql("VACUUM " + v);
    assertTrue(fragments("vv") < before, before + " fragments before OPTIMIZE, "
        + fragments("vv") + " after");
    f.sql("INSERT INTO " + t + " SELECT id + 900, 'last' FROM range(0, 10, 1, 1)");
    f.sql("UPDATE " + t + " SET name = 'changed' WHERE id IN (4, 250)");
    f.sql("DELETE FROM " + t + " WHERE id = 6");
    f.sql("REFRESH MATERIALIZED VIEW " + v);
    assertEquals(f.rows(select), f.rows("SELECT id, name FROM " + v));
  }
}
