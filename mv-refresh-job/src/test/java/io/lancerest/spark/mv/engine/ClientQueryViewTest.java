package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.ViewDescription;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Client-managed query views end to end on the real directory server. */
class ClientQueryViewTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static String source(String ns, int from, int to) {
    String t = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + t + " (id BIGINT, name STRING, score INT)");
    insert(t, from, to);
    return t;
  }

  private static void insert(String t, int from, int to) {
    StringBuilder values = new StringBuilder();
    for (int i = from; i < to; i++) {
      values.append(i == from ? "" : ", ").append("(").append(i).append(", 'n").append(i)
          .append("', ").append(i % 20).append(")");
    }
    f.sql("INSERT INTO " + t + " VALUES " + values);
  }

  @Test
  void createPopulatesAndRefreshFollowsInsertsUpdatesAndDeletes() {
    String ns = f.namespace("q");
    String src = source(ns, 0, 50);
    String v = "lance." + ns + ".v";
    String select = "SELECT id, upper(name) AS uname, score * 2 AS s2 FROM " + src
        + " WHERE score > 5";
    List<Row> created = f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    assertEquals(1, created.size());
    Row c = created.get(0);
    assertEquals("DONE", c.getString(1));
    assertEquals("query", c.getString(2));
    assertEquals(2L, c.getLong(3)); // CREATE TABLE = version 1, INSERT = version 2
    assertEquals(f.rows(select).size(), c.getLong(4));
    assertEquals(f.rows(select), f.rows("SELECT id, uname, s2 FROM " + v));

    insert(src, 50, 60);
    f.sql("UPDATE " + src + " SET score = 19 WHERE id = 3"); // enters the filter
    f.sql("UPDATE " + src + " SET name = 'changed' WHERE id = 10"); // stays, new value
    f.sql("UPDATE " + src + " SET score = 0 WHERE id = 11"); // leaves the filter
    f.sql("DELETE FROM " + src + " WHERE id = 12");
    Row r = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
    assertEquals("DONE", r.getString(1));
    assertEquals(f.rows(select), f.rows("SELECT id, uname, s2 FROM " + v));
    assertTrue(r.getLong(4) > 0 && r.getLong(5) > 0, r.toString());

    // nothing changed: no commit, SKIPPED
    Row again = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
    assertEquals("SKIPPED", again.getString(1));

    ViewDescription d = f.views().describe(List.of(ns, "v"));
    assertEquals("client", d.mode());
    assertEquals(r.getLong(3), d.state().watermark());
    assertTrue(d.state().lastJob().contains(r.getString(0)), d.state().lastJob());
    assertEquals(List.of(List.of(ns, "v")), f.views().list(List.of(ns)));
    RefreshResult skipped = f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS);
    assertEquals(RefreshResult.JobStatus.SKIPPED, skipped.status());
  }

  @Test
  void aViewIsATableAndShowDescribeDropWork() {
    String ns = f.namespace("dd");
    String src = source(ns, 0, 20);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, name FROM " + src
        + " WHERE score < 10");
    f.sql("CREATE TABLE lance." + ns + ".plain (x INT)");
    insert(src, 20, 25);
    f.sql("REFRESH MATERIALIZED VIEW " + v);

    List<String> shown = f.rows("SHOW MATERIALIZED VIEWS IN lance." + ns);
    assertEquals(List.of(ns + "|v"), shown);
    Map<String, String> info = new java.util.HashMap<>();
    for (Row r : f.sql("DESCRIBE MATERIALIZED VIEW " + v)) {
      info.put(r.getString(0), r.isNullAt(1) ? null : r.getString(1));
    }
    assertEquals("query", info.get("Kind"));
    assertEquals("client", info.get("Mode"));
    assertEquals(ns + ".src", info.get("Source"));
    assertTrue(info.get("Definition").contains("\"filter\":\"(score < 10)\""),
        info.get("Definition"));
    assertEquals("3", info.get("Last refreshed source version"));
    assertTrue(info.get("Last job").contains("\"status\":\"DONE\""), info.get("Last job"));

    // DESCRIBE TABLE EXTENDED shows the definition as table properties
    String extended = f.rows("DESCRIBE TABLE EXTENDED " + v).toString();
    assertTrue(extended.contains("materialized_view.kind=query"), extended);
    assertTrue(extended.contains("materialized_view.definition="), extended);
    // time travel: the view version before the refresh has the first population only
    long before = f.sql("SELECT count(*) FROM " + v + " VERSION AS OF 3").get(0).getLong(0);
    assertEquals(f.rows("SELECT id FROM " + src + " WHERE score < 10 AND id < 20").size(),
        before);

    io.lancerest.spark.mv.error.InvalidViewDefinitionException notView = org.junit.jupiter.api
        .Assertions.assertThrows(io.lancerest.spark.mv.error.InvalidViewDefinitionException.class,
            () -> f.sql("DROP MATERIALIZED VIEW lance." + ns + ".plain"));
    assertTrue(notView.getMessage().contains("is not a materialized view"), notView.getMessage());
    f.sql("DROP MATERIALIZED VIEW " + v);
    assertTrue(f.rows("SHOW MATERIALIZED VIEWS IN lance." + ns).isEmpty());
    assertTrue(!f.spark.catalog().tableExists(v));
    f.sql("DROP MATERIALIZED VIEW IF EXISTS " + v);
    org.junit.jupiter.api.Assertions.assertThrows(
        io.lancerest.spark.mv.error.MaterializedViewNotFoundException.class,
        () -> f.sql("DROP MATERIALIZED VIEW " + v));
  }

  @Test
  void selectStarHidesLayoutColumnsAndOnlyRefreshWritesTheView() {
    String ns = f.namespace("hide");
    String src = source(ns, 0, 10);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, name FROM " + src
        + " WHERE score > 3");
    assertEquals(List.of("id", "name"), List.of(f.spark.table(v).columns()));
    assertEquals(List.of("id", "name"), List.of(f.sql("SELECT * FROM " + v).get(0).schema()
        .fieldNames()));
    // Named explicitly, the layout columns are there (metadata columns): the source's row ids.
    assertEquals(f.rows("SELECT _rowid, true, id FROM " + src + " WHERE score > 3"),
        f.rows("SELECT __source_row_id, __is_set, id FROM " + v));

    io.lancerest.spark.catalog.UnsupportedCatalogOperationException insert = org.junit.jupiter
        .api.Assertions.assertThrows(
            io.lancerest.spark.catalog.UnsupportedCatalogOperationException.class,
            () -> f.sql("INSERT INTO " + v + " VALUES (100, 'x')"));
    assertEquals("Cannot write to materialized view " + v + ": a materialized view is written "
        + "only by REFRESH MATERIALIZED VIEW, which keeps it equal to its definition over the "
        + "source table. Change the source table and refresh the view, or drop the view (DROP "
        + "MATERIALIZED VIEW)", insert.getMessage());
    io.lancerest.spark.catalog.UnsupportedCatalogOperationException delete = org.junit.jupiter
        .api.Assertions.assertThrows(
            io.lancerest.spark.catalog.UnsupportedCatalogOperationException.class,
            () -> f.sql("DELETE FROM " + v + " WHERE id = 4"));
    assertTrue(delete.getMessage().startsWith("Cannot delete rows of materialized view " + v
        + ": "), delete.getMessage());
    // TRUNCATE is Spark's own refusal: no table of this catalog supports it.
    org.apache.spark.sql.AnalysisException truncate = org.junit.jupiter.api.Assertions
        .assertThrows(org.apache.spark.sql.AnalysisException.class,
            () -> f.sql("TRUNCATE TABLE " + v));
    assertTrue(truncate.getMessage().startsWith("Table does not support truncates: " + v),
        truncate.getMessage());

    insert(src, 10, 15);
    assertEquals("DONE", f.sql("REFRESH MATERIALIZED VIEW " + v).get(0).getString(1));
    assertEquals(f.rows("SELECT id, name FROM " + src + " WHERE score > 3"),
        f.rows("SELECT * FROM " + v));
    // Time travel sees the same columns, by SQL and by read option.
    assertEquals(List.of("id", "name"), List.of(f.sql("SELECT * FROM " + v + " VERSION AS OF 3")
        .get(0).schema().fieldNames()));
    assertEquals(f.rows("SELECT id, name FROM " + src + " WHERE score > 3 AND id < 10"),
        f.rows("SELECT * FROM " + v + " VERSION AS OF 3"));
    assertEquals(List.of("id", "name"), List.of(f.spark.read().option("versionAsOf", "3")
        .table(v).columns()));
  }

  @Test
  void chunkerViewsAreCreatedAndRefreshedThroughTheSameEngine() {
    String ns = f.namespace("ck");
    String docs = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, body STRING)");
    f.sql("INSERT INTO " + docs + " VALUES (1, 'aaaa bbbb'), (2, 'cc')");
    String v = "lance." + ns + ".p";
    Row c = f.sql("CREATE MATERIALIZED VIEW " + v + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'body', "
        + "separator = ' ') AS SELECT id, body FROM " + docs).get(0);
    assertEquals("chunker", c.getString(2));
    assertEquals(List.of("1|aaaa|0", "1|bbbb|5", "2|cc|0"),
        f.rows("SELECT id, chunk, char_offset FROM " + v));
    f.sql("INSERT INTO " + docs + " VALUES (3, 'dd ee')");
    f.sql("DELETE FROM " + docs + " WHERE id = 1");
    Row r = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
    assertEquals("DONE", r.getString(1));
    assertEquals(List.of("2|cc|0", "3|dd|0", "3|ee|3"),
        f.rows("SELECT id, chunk, char_offset FROM " + v));
  }
}
