package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code EXPLAIN REFRESH MATERIALIZED VIEW} on real views of each kind: it commits nothing, and
 * what it announces (mode, fragments, rows to delete, row change) is what the refresh then does.
 */
class ExplainRefreshTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static Map<String, String> explain(String sql) {
    Map<String, String> info = new LinkedHashMap<>();
    for (Row r : f.sql(sql)) {
      info.put(r.getString(0), r.isNullAt(1) ? null : r.getString(1));
    }
    return info;
  }

  /** The source version the view reflects. */
  private static long watermark(String ns, String view) {
    return f.views().describe(List.of(ns, view)).state().watermark();
  }

  private static long count(String table) {
    return f.sql("SELECT count(*) FROM " + table).get(0).getLong(0);
  }

  private static String source(String ns) {
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " TBLPROPERTIES ('enable_stable_row_ids' = 'true') AS SELECT "
        + "id, CAST(id % 4 AS STRING) AS cat, concat('doc ', CAST(id AS STRING), ' words here') "
        + "AS body, CAST(id % 10 AS INT) AS score FROM range(200)");
    return src;
  }

  private static void change(String src) {
    f.sql("INSERT INTO " + src + " SELECT id, CAST(id % 4 AS STRING), concat('doc ', CAST(id AS "
        + "STRING), ' more words'), CAST(id % 10 AS INT) FROM range(200, 230)");
    f.sql("UPDATE " + src + " SET body = concat(body, ' changed'), score = 9 WHERE id IN (4, 5)");
    f.sql("DELETE FROM " + src + " WHERE id IN (6, 7, 8)");
  }

  @Test
  void aQueryViewPlanIsWhatItsRefreshDoes() {
    String ns = f.namespace("xq");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, upper(body) AS ub FROM " + src
        + " WHERE score >= 5");
    Map<String, String> idle = explain("EXPLAIN REFRESH MATERIALIZED VIEW " + v);
    assertEquals("no-op", idle.get("Mode"), idle.toString());
    assertEquals("0", idle.get("Expected view row change"));
    assertEquals("none", idle.get("Commit"));

    long from = watermark(ns, "v");
    change(src); // three commits: INSERT, UPDATE, DELETE
    String viewVersion = f.rows("DESCRIBE MATERIALIZED VIEW " + v).toString();
    long before = count(v);
    Map<String, String> plan = explain("EXPLAIN REFRESH MATERIALIZED VIEW " + v);
    assertEquals("incremental", plan.get("Mode"), plan.toString());
    assertTrue(plan.get("Reason").startsWith("source changed since version " + from),
        plan.toString());
    assertEquals(from + " -> " + (from + 3), plan.get("Source versions"));
    assertTrue(plan.get("Source fragments to read").matches("\\d+ of \\d+ \\[[0-9, ]+\\]"),
        plan.toString());
    assertEquals("on the driver, no Spark job", plan.get("Write"));
    assertEquals(viewVersion, f.rows("DESCRIBE MATERIALIZED VIEW " + v).toString(),
        "EXPLAIN committed nothing");
    assertEquals(before, count(v));

    // the caller's job group is the caller's again after EXPLAIN and after REFRESH
    f.spark.sparkContext().setJobGroup("caller-group", "the caller's jobs", true);
    Row r;
    try {
      explain("EXPLAIN REFRESH MATERIALIZED VIEW " + v);
      assertEquals("caller-group",
          f.spark.sparkContext().getLocalProperty("spark.jobGroup.id"));
      r = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
      assertEquals("caller-group",
          f.spark.sparkContext().getLocalProperty("spark.jobGroup.id"));
      assertEquals("the caller's jobs",
          f.spark.sparkContext().getLocalProperty("spark.job.description"));
      assertEquals("true", f.spark.sparkContext().getLocalProperty(
          "spark.job.interruptOnCancel"), "the caller's interrupt flag is back");
    } finally {
      // the thread is shared with later test classes (one SparkContext per JVM)
      f.spark.sparkContext().clearJobGroup();
    }
    long after = count(v);
    assertEquals(String.valueOf(r.getLong(5)), plan.get("View rows to delete"), plan.toString());
    assertEquals(String.valueOf(r.getLong(4)), plan.get("View rows to write"), plan.toString());
    assertEquals((after - before > 0 ? "+" : "") + (after - before),
        plan.get("Expected view row change"));

    Map<String, String> forced = explain("EXPLAIN REFRESH MATERIALIZED VIEW " + v
        + " WITH (force = true)");
    assertEquals("full", forced.get("Mode"));
    assertEquals("force = true", forced.get("Reason"));
    assertEquals(String.valueOf(after), forced.get("View rows to delete"));
    assertEquals("0", forced.get("Expected view row change"), "a rebuild of the same version");
    assertTrue(forced.get("Write").startsWith("Spark job, "), forced.toString());
  }

  @Test
  void chunkerAndUdtfPlansSayWhatIsKnownBeforeTheFunctionRuns() {
    String ns = f.namespace("xf");
    String src = source(ns);
    String c = "lance." + ns + ".c";
    String u = "lance." + ns + ".u";
    f.sql("CREATE MATERIALIZED VIEW " + c + " USING CHUNKER 'io.lancerest.spark.mv.chunker."
        + "TextSplitter' OPTIONS (input_columns = 'body', chunk_size = 2, overlap = 0) AS "
        + "SELECT id, body FROM " + src);
    f.sql("CREATE MATERIALIZED VIEW " + u + " USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' "
        + "PARTITION BY cat OPTIONS (k = '2', order_by = 'score') AS SELECT cat, id, score FROM "
        + src);
    assertEquals("no-op", explain("EXPLAIN REFRESH MATERIALIZED VIEW " + c).get("Mode"));
    assertEquals("no-op", explain("EXPLAIN REFRESH MATERIALIZED VIEW " + u).get("Mode"));

    change(src);
    Map<String, String> chunker = explain("EXPLAIN REFRESH MATERIALIZED VIEW " + c);
    assertEquals("incremental", chunker.get("Mode"), chunker.toString());
    // UPDATE gives the two rows new row ids: 30 inserted + 2 are new parents, 3 + 2 are gone
    assertTrue(chunker.get("Reason").contains("32 parents to expand (0 changed), 5 removed"),
        chunker.toString());
    assertEquals("unknown", chunker.get("Expected view row change"));
    assertEquals("on the driver, no Spark job", chunker.get("Write"), chunker.toString());
    assertTrue(chunker.get("Note").endsWith("; a Spark job of 1 tasks expands them instead if "
        + "the definition cannot run on the driver, the parents exceed "
        + "spark.lancerest.mv.chunker.localRefreshMaxBytes or the chunker takes longer than "
        + "spark.lancerest.mv.chunker.localRefreshMaxMillis"), chunker.toString());
    Row cr = f.sql("REFRESH MATERIALIZED VIEW " + c).get(0);
    assertEquals(String.valueOf(cr.getLong(5)), chunker.get("View rows to delete"),
        chunker.toString());

    long udtfRows = count(u);
    Map<String, String> udtf = explain("EXPLAIN REFRESH MATERIALIZED VIEW " + u);
    assertEquals("full", udtf.get("Mode"), udtf.toString());
    assertTrue(udtf.get("Reason").endsWith("; 4 partitions to compute"), udtf.toString());
    assertEquals(String.valueOf(udtfRows), udtf.get("View rows to delete"));
    assertTrue(udtf.get("Source fragments to read").startsWith("all "), udtf.toString());
    assertEquals(udtfRows, count(u), "EXPLAIN rebuilt nothing");
  }

  @Test
  void badRequestsFailAsTheRefreshWould() {
    String ns = f.namespace("xe");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id FROM " + src);
    assertThrows(MaterializedViewNotFoundException.class,
        () -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW lance." + ns + ".missing"));
    InvalidOptionException bad = assertThrows(InvalidOptionException.class,
        () -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v + " WITH (colour = 'red')"));
    assertTrue(bad.getMessage().contains("Unknown refresh option 'colour'"), bad.getMessage());
    Exception limit = assertThrows(Exception.class,
        () -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v + " WITH (output_limit = 5)"));
    assertTrue(limit.getMessage().contains("output_limit"), limit.getMessage());
    Exception future = assertThrows(Exception.class,
        () -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v + " WITH (src_version = 99)"));
    assertTrue(future.getMessage().contains("src_version 99 does not exist"),
        future.getMessage());
  }
}
