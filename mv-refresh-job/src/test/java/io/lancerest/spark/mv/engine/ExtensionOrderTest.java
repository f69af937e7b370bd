package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.LanceRestSparkExtensions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * Spark's ALTER TABLE statements, and statements no parser takes, on this catalog with our
 * extension before lance-spark's (the documented order), after it, and alone. lance-spark
 * 0.4.0's parser answers a statement neither Spark's grammar nor its own takes with no plan,
 * which Spark reported as INTERNAL_ERROR ("plan is null") instead of the syntax error.
 */
class ExtensionOrderTest {
  static EngineFixture f;
  static String ns;
  /** Sessions by the extensions they list, in order. */
  static Map<String, SparkSession> sessions = new LinkedHashMap<>();

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("ord");
    sessions.put("ours,lance-spark", f.spark);
    sessions.put("lance-spark,ours", f.sessionWith(new LanceSparkSessionExtensions(),
        new LanceRestSparkExtensions()));
    sessions.put("ours", f.sessionWith(new LanceRestSparkExtensions()));
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static List<Row> sql(SparkSession s, String sql) {
    SparkSession.setActiveSession(s);
    try {
      return s.sql(sql).collectAsList();
    } finally {
      SparkSession.setActiveSession(f.spark);
    }
  }

  private static Map<String, String> properties(SparkSession s, String t) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Row r : sql(s, "SHOW TBLPROPERTIES " + t)) {
      out.put(r.getString(0), r.getString(1));
    }
    return out;
  }

  @Test
  void setAndUnsetTblpropertiesInEveryOrder() {
    int i = 0;
    for (Map.Entry<String, SparkSession> e : sessions.entrySet()) {
      String t = "lance." + ns + ".props" + i++;
      SparkSession s = e.getValue();
      sql(s, "CREATE TABLE " + t + " (id BIGINT, name STRING)");
      sql(s, "INSERT INTO " + t + " VALUES (1, 'a')");
      sql(s, "ALTER TABLE " + t + " SET TBLPROPERTIES ('tier' = 'gold', owner_team = 'blue', "
          + "'retries' = 3)");
      Map<String, String> set = properties(s, t);
      assertEquals("gold", set.get("tier"), e.getKey() + ": " + set);
      assertEquals("blue", set.get("owner_team"), e.getKey() + ": " + set);
      assertEquals("3", set.get("retries"), e.getKey() + ": " + set);
      sql(s, "ALTER TABLE " + t + " UNSET TBLPROPERTIES ('tier', 'retries')");
      Map<String, String> unset = properties(s, t);
      assertFalse(unset.containsKey("tier") || unset.containsKey("retries"),
          e.getKey() + ": " + unset);
      assertEquals("blue", unset.get("owner_team"), e.getKey() + ": " + unset);
      // and seen by the other sessions, through their own catalogs
      for (SparkSession other : sessions.values()) {
        assertEquals("blue", properties(other, t).get("owner_team"), e.getKey());
      }
    }
  }

  @Test
  void otherAlterTableFormsInEveryOrder() {
    int i = 0;
    for (Map.Entry<String, SparkSession> e : sessions.entrySet()) {
      String t = "lance." + ns + ".alter" + i++;
      SparkSession s = e.getValue();
      sql(s, "CREATE TABLE " + t + " (id BIGINT, name STRING)");
      sql(s, "INSERT INTO " + t + " VALUES (1, 'a')");
      sql(s, "ALTER TABLE " + t + " RENAME COLUMN name TO label");
      sql(s, "ALTER TABLE " + t + " ADD COLUMNS (score INT)");
      sql(s, "ALTER TABLE " + t + " ADD COLUMN note STRING");
      sql(s, "COMMENT ON TABLE " + t + " IS 'renamed'");
      assertEquals("[[1,a,null,null]]", sql(s, "SELECT id, label, score, note FROM " + t)
          .toString(), e.getKey());
      String described = sql(s, "DESCRIBE TABLE EXTENDED " + t).toString();
      assertTrue(described.contains("[Comment,renamed,]"), e.getKey() + ": " + described);
    }
  }

  @Test
  void aStatementNoParserTakesIsSparksSyntaxErrorInEveryOrder() {
    String t = "lance." + ns + ".syntax";
    sql(f.spark, "CREATE TABLE " + t + " (id BIGINT)");
    Map<String, String> wrong = new LinkedHashMap<>();
    wrong.put("ALTER TABLE " + t + " SET TBLPROPERTIES ('k' = v)", "'v'");
    wrong.put("ALTER TABLE " + t + " SET TBLPROPERTIES ('k' = -1)", "'-'");
    wrong.put("SELEC 1", "'SELEC'");
    wrong.put("CREATE MATERIALIZED VIEW lance." + ns + ".v AS SELEC id FROM " + t, "'SELEC'");
    for (Map.Entry<String, SparkSession> e : sessions.entrySet()) {
      for (Map.Entry<String, String> w : wrong.entrySet()) {
        AnalysisException error = assertThrows(AnalysisException.class,
            () -> sql(e.getValue(), w.getKey()), e.getKey() + ": " + w.getKey());
        String where = e.getKey() + ": " + w.getKey() + ": " + error;
        assertEquals("PARSE_SYNTAX_ERROR", error.getErrorClass(), where);
        assertTrue(error.getMessage().strip().startsWith("[PARSE_SYNTAX_ERROR] Syntax error at "
            + "or near " + w.getValue()), where);
        assertTrue(error.getMessage().contains("== SQL =="), where);
        if (e.getKey().equals("ours")) {
          assertTrue(error instanceof ParseException, where); // Spark's, untouched
        }
      }
    }
  }

  @Test
  void lanceSparksStatementsStillReachItInEitherOrder() {
    for (String order : List.of("ours,lance-spark", "lance-spark,ours")) {
      SparkSession s = sessions.get(order);
      String t = "lance." + ns + ".ls" + order.indexOf(',');
      sql(s, "CREATE TABLE " + t + " (id BIGINT)");
      sql(s, "INSERT INTO " + t + " VALUES (1)");
      sql(s, "INSERT INTO " + t + " VALUES (2)");
      assertEquals("2", sql(s, "OPTIMIZE " + t).get(0).get(0).toString(), order);
      sql(s, "ALTER TABLE " + t + " CREATE INDEX id_idx USING btree (id)");
      assertEquals(1, sql(s, "SHOW INDEXES FROM " + t).size(), order);
      // and an error in one of them is lance-spark's own
      Exception e = assertThrows(Exception.class, () -> sql(s, "ALTER TABLE " + t
          + " CREATE INDEX b_idx USING bitmapx (id)"));
      assertTrue(String.valueOf(e.getMessage()).contains("bitmapx"), order + ": " + e);
    }
  }
}
