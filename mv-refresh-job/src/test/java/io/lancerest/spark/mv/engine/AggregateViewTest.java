package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Aggregate query views on the real directory server: every refresh after INSERT, DELETE,
 * scattered UPDATE, vanished and new groups, a deleted min or max, NULL keys and values gives
 * the rows Spark's own GROUP BY gives, incrementally (EXPLAIN says so), and equal to a view
 * built from scratch.
 */
class AggregateViewTest {
  static EngineFixture f;

  /** The cost rule that rebuilds a view whose change reads most of its source. */
  static final String REBUILD = "spark.lancerest.mv.query.aggregateRebuildFraction";

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    // These small sources' scattered changes touch every fragment: by default the refresh
    // would rebuild them; here the incremental path is what is tested.
    f.spark.conf().set(REBUILD, "0");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static String source(String ns) {
    String t = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + t + " (id BIGINT, k1 STRING, k2 INT, x BIGINT, d DECIMAL(10,2), "
        + "y DOUBLE)");
    insert(t, 0, 200);
    return t;
  }

  /** Rows id in [from, to): ten k1 values and a NULL one, three k2, some NULL values. */
  private static void insert(String t, int from, int to) {
    f.sql("INSERT INTO " + t + " SELECT id, CASE WHEN id % 11 = 10 THEN NULL ELSE "
        + "concat('k', CAST(id % 11 AS STRING)) END, CAST(id % 3 AS INT), CASE WHEN id % 7 = 0 "
        + "THEN NULL ELSE id * 3 - 250 END, CAST(id / 4 AS DECIMAL(10,2)), CASE WHEN id % 5 = 0 "
        + "THEN NULL ELSE id * 0.1 END FROM range(" + from + ", " + to + ")");
  }

  private static final String COLUMNS = "k1, k2, count(*) AS n, count(x) AS cx, sum(x) AS sx, "
      + "min(x) AS mnx, max(x) AS mxx, avg(x) AS ax, sum(d) AS sd, avg(d) AS ad, sum(y) AS sy, "
      + "max(k1) AS mk";
  /** The view's columns as compared: doubles rounded, everything else exact. */
  private static final String READ = "k1, k2, n, cx, sx, mnx, mxx, round(ax, 9), sd, ad, "
      + "round(sy, 6), mk";

  private static String select(String src) {
    return "SELECT " + COLUMNS + " FROM " + src + " WHERE id >= 0 GROUP BY k1, k2";
  }

  private static void assertEqualsSelect(String v, String select) {
    assertEquals(f.rows("SELECT " + READ + " FROM (" + select + ")"),
        f.rows("SELECT " + READ + " FROM " + v), v + " equals its SELECT");
  }

  private static Map<String, String> explain(String v) {
    Map<String, String> info = new LinkedHashMap<>();
    for (Row r : f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v)) {
      info.put(r.getString(0), r.isNullAt(1) ? null : r.getString(1));
    }
    return info;
  }

  private static RefreshResult refreshIncrementally(String ns, String v) {
    return refreshIncrementally(ns, v, null);
  }

  /** @param write how EXPLAIN says the groups are merged and written, or {@code null} */
  private static RefreshResult refreshIncrementally(String ns, String v, String write) {
    Map<String, String> plan = explain("lance." + ns + "." + v);
    assertEquals("incremental", plan.get("Mode"), plan.toString());
    if (write != null) {
      assertTrue(plan.get("Write").startsWith(write), plan.toString());
    }
    RefreshResult r = f.views().refresh(List.of(ns, v), RefreshOptions.DEFAULTS);
    assertEquals(RefreshResult.JobStatus.DONE, r.status(), r.toString());
    return r;
  }

  @Test
  void everyRefreshEqualsItsSelectAndAViewBuiltFromScratch() {
    scenario("agg", "on the driver");
  }

  /**
   * The same with arrived, departed and view rows read by Spark scans instead of on the
   * driver, and the groups merged and written by Spark jobs.
   */
  @Test
  void theSameWhenDepartedRowsAreScannedInSpark() {
    String conf = "spark.lancerest.mv.query.localRefreshMaxRows";
    f.spark.conf().set(conf, "0");
    try {
      scenario("ags", "Spark job");
    } finally {
      f.spark.conf().unset(conf);
    }
  }

  private static void scenario(String prefix, String write) {
    String ns = f.namespace(prefix);
    String src = source(ns);
    String v = "lance." + ns + ".v";
    String select = select(src);
    Row created = f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select).get(0);
    assertEquals("DONE", created.getString(1));
    assertEqualsSelect(v, select);
    // SELECT * shows the SELECT's columns only; the state is there when named
    assertEquals(List.of("k1", "k2", "n", "cx", "sx", "mnx", "mxx", "ax", "sd", "ad", "sy",
        "mk"), Arrays.asList(f.spark.table(v).columns()));
    assertEquals(f.rows("SELECT count(*) FROM " + src + " WHERE k1 = 'k3' AND k2 = 0"),
        f.rows("SELECT __agg_rows FROM " + v + " WHERE k1 = 'k3' AND k2 = 0"));

    // arrivals, a new group (k1 = 'new') and rows with NULL keys
    insert(src, 200, 260);
    f.sql("INSERT INTO " + src + " VALUES (1000, 'new', 1, 5, 1.50, 2.5), "
        + "(1001, NULL, NULL, NULL, NULL, NULL)");
    refreshIncrementally(ns, "v", write);
    assertEqualsSelect(v, select);

    // scattered updates, one of them to every row of a group
    f.sql("UPDATE " + src + " SET x = x + 1000, y = y * 2 WHERE id % 17 = 3");
    f.sql("UPDATE " + src + " SET d = d + 1 WHERE k1 = 'k4'");
    refreshIncrementally(ns, "v", write);
    assertEqualsSelect(v, select);

    // the min and the max of a group leave, a group vanishes, a group's x all become NULL
    String minRow = f.rows("SELECT min_by(id, x) FROM " + src + " WHERE k1 = 'k2' AND k2 = 1")
        .get(0);
    String maxRow = f.rows("SELECT max_by(id, x) FROM " + src + " WHERE k1 = 'k5' AND k2 = 2")
        .get(0);
    f.sql("DELETE FROM " + src + " WHERE id IN (" + minRow + ", " + maxRow + ")");
    f.sql("DELETE FROM " + src + " WHERE k1 = 'k6' AND k2 = 0");
    f.sql("UPDATE " + src + " SET x = NULL WHERE k1 = 'k7' AND k2 = 1");
    long groupsBefore = f.sql("SELECT count(*) FROM " + v).get(0).getLong(0);
    RefreshResult r = refreshIncrementally(ns, "v", write);
    assertEqualsSelect(v, select);
    assertEquals(groupsBefore - 1, f.sql("SELECT count(*) FROM " + v).get(0).getLong(0),
        "the group whose rows all left is gone");
    assertEquals(List.of("0|null|null|null"), f.rows("SELECT cx, sx, mnx, ax FROM " + v
        + " WHERE k1 = 'k7' AND k2 = 1"), "an all-NULL group: count 0, sum/min/avg NULL");
    assertTrue(r.rowsDeleted() > 0 && r.rowsInserted() > 0, r.toString());

    // the max of a group raised and the min of another lowered by UPDATE: the arriving value
    // is the new extreme, no group is recomputed
    String raised = f.rows("SELECT max_by(id, x) FROM " + src + " WHERE k1 = 'k3' AND k2 = 0")
        .get(0);
    String lowered = f.rows("SELECT min_by(id, x) FROM " + src + " WHERE k1 = 'k4' AND k2 = 1")
        .get(0);
    f.sql("UPDATE " + src + " SET x = x + 5 WHERE id = " + raised);
    f.sql("UPDATE " + src + " SET x = x - 5 WHERE id = " + lowered);
    Map<String, String> covered = explain(v);
    assertTrue(covered.get("Reason").endsWith(", 0 recomputed from their rows"),
        covered.toString());
    refreshIncrementally(ns, "v", write);
    assertEqualsSelect(v, select);

    // nothing changed: SKIPPED
    assertEquals(RefreshResult.JobStatus.SKIPPED,
        f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS).status());

    // the incremental view equals one built from scratch, hidden state included
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".fresh AS " + select);
    String state = "k1, k2, n, cx, sx, mnx, mxx, sd, ad, mk, __agg_rows, __agg_1_n, "
        + "__agg_2_sum, __agg_6_sum, __agg_7_n";
    assertEquals(f.rows("SELECT " + state + " FROM lance." + ns + ".fresh"),
        f.rows("SELECT " + state + " FROM " + v));
    // a forced refresh rebuilds to the same rows
    f.views().refresh(List.of(ns, "v"), RefreshOptions.builder().force(true).build());
    assertEqualsSelect(v, select);
  }

  @Test
  void havingHidesGroupsThatComeBackWhenTheyPassAgain() {
    String ns = f.namespace("agh");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    String select = "SELECT k1, sum(x) AS sx FROM " + src + " GROUP BY k1 HAVING count(*) > 18";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    assertEquals(f.rows(select), f.rows("SELECT * FROM " + v));
    assertEquals(List.of("k1", "sx"), Arrays.asList(f.spark.table(v).columns()));
    // k1 = 'k1' drops under the threshold, then comes back with new rows
    f.sql("DELETE FROM " + src + " WHERE k1 = 'k1' AND id < 40");
    refreshIncrementally(ns, "v");
    assertEquals(f.rows(select), f.rows("SELECT * FROM " + v));
    assertTrue(f.rows("SELECT * FROM " + v + " WHERE k1 = 'k1'").isEmpty());
    f.sql("INSERT INTO " + src + " SELECT 5000 + id, 'k1', 0, id, 1, 1 FROM range(0, 5)");
    refreshIncrementally(ns, "v");
    assertEquals(f.rows(select), f.rows("SELECT * FROM " + v));
    assertEquals(1, f.rows("SELECT * FROM " + v + " WHERE k1 = 'k1'").size());
  }

  @Test
  void aGrandTotalWithoutGroupByIsOneRowAlways() {
    String ns = f.namespace("agt");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    String select = "SELECT count(*) AS n, sum(x) AS sx, max(y) AS my FROM " + src
        + " WHERE k2 = 1";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    assertEquals(f.rows(select), f.rows("SELECT * FROM " + v));
    f.sql("DELETE FROM " + src + " WHERE k2 = 1");
    refreshIncrementally(ns, "v");
    assertEquals(List.of("0|null|null"), f.rows("SELECT * FROM " + v));
    insert(src, 300, 320);
    refreshIncrementally(ns, "v");
    assertEquals(f.rows(select), f.rows("SELECT * FROM " + v));
  }

  @Test
  void aRefreshThatFailsBeforeItsCommitLeavesTheViewAsItWas() {
    String ns = f.namespace("aga");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    String select = select(src);
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    List<String> before = f.rows("SELECT * FROM " + v);
    insert(src, 200, 230);
    f.sql("UPDATE " + src + " SET x = 0 WHERE id % 13 = 1");
    Probes killed = new Probes().beforeCommit(() -> {
      throw new IllegalStateException("killed before the commit");
    });
    RuntimeException e = assertThrows(RuntimeException.class,
        () -> f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS, killed));
    assertTrue(String.valueOf(e.getMessage()).contains("killed before the commit"),
        e.toString());
    assertEquals(before, f.rows("SELECT * FROM " + v), "the old content");
    refreshIncrementally(ns, "v");
    assertEqualsSelect(v, select);
  }

  @Test
  void explainSaysHowManyGroupsItTouches() {
    String ns = f.namespace("agx");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT k1, count(*) AS n FROM " + src
        + " GROUP BY k1");
    f.sql("INSERT INTO " + src + " VALUES (900, 'k1', 0, 1, 1, 1), (901, 'zz', 0, 1, 1, 1)");
    Map<String, String> plan = explain(v);
    assertEquals("incremental", plan.get("Mode"), plan.toString());
    assertTrue(plan.get("Reason").contains("2 groups touched (1 in the view, 1 new)"),
        plan.toString());
    assertEquals(11L, f.sql("SELECT count(*) FROM " + v).get(0).getLong(0), "nothing committed");
  }

  @Test
  void byDefaultAChangeThatReadsMostOfTheSourceRebuildsAndASmallOneDoesNot() {
    String ns = f.namespace("agc");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    String select = select(src);
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    f.spark.conf().unset(REBUILD);
    try {
      insert(src, 200, 205);
      assertEquals("incremental", explain(v).get("Mode"));
      f.sql("REFRESH MATERIALIZED VIEW " + v);
      assertEqualsSelect(v, select);
      // every fragment, most rows: rewritten rows arrive, their old values depart
      f.sql("UPDATE " + src + " SET x = x + 1 WHERE id % 9 <> 2");
      Map<String, String> plan = explain(v);
      assertEquals("full", plan.get("Mode"), plan.toString());
      assertTrue(plan.get("Reason").contains("aggregating the whole source reads no more"),
          plan.toString());
      f.sql("REFRESH MATERIALIZED VIEW " + v);
      assertEqualsSelect(v, select);
      insert(src, 300, 301);
      f.spark.conf().set(REBUILD, "zero");
      InvalidOptionException bad = assertThrows(InvalidOptionException.class,
          () -> f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v + " WITH (force = false)"));
      assertTrue(bad.getMessage().contains(REBUILD), bad.getMessage());
    } finally {
      f.spark.conf().set(REBUILD, "0");
    }
  }

  @Test
  void wideDecimalSumsStayExactAcrossRefreshes() {
    String ns = f.namespace("agd");
    String t = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + t + " (k INT, d DECIMAL(38,18))");
    f.sql("INSERT INTO " + t + " SELECT CAST(id % 3 AS INT), CAST(id AS DECIMAL(38,18)) / 7 "
        + "FROM range(0, 60)");
    String select = "SELECT k, sum(d) AS s, avg(d) AS a FROM " + t + " GROUP BY k";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    f.sql("INSERT INTO " + t + " SELECT CAST(id % 3 AS INT), CAST(id AS DECIMAL(38,18)) / 13 "
        + "FROM range(60, 90)");
    f.sql("DELETE FROM " + t + " WHERE k = 1 AND d < 2");
    refreshIncrementally(ns, "v");
    assertEquals(f.rows(select), f.rows("SELECT * FROM lance." + ns + ".v"));
  }

  @Test
  void aStructKeyWhoseGroupIsRecomputedIsFoundByAJoin() {
    String ns = f.namespace("agk");
    String t = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + t + " (id BIGINT, s STRUCT<a: INT, b: STRING>, x INT)");
    f.sql("INSERT INTO " + t + " SELECT id, named_struct('a', CAST(id % 2 AS INT), 'b', 'z'), "
        + "CAST(id AS INT) FROM range(0, 20)");
    String select = "SELECT s, min(x) AS lo, count(*) AS n FROM " + t + " GROUP BY s";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    f.sql("DELETE FROM " + t + " WHERE id = 0"); // the min of group {0, z}
    refreshIncrementally(ns, "v");
    assertEquals(f.rows(select), f.rows("SELECT * FROM lance." + ns + ".v"));
  }

  /**
   * The driver's merge orders and adds as Spark does: -0.0 and 0.0 are one group and NaN one
   * more, NaN is the largest double, strings order by their UTF-8 bytes (an emoji above
   * U+FFFF, unlike Java's String order), a bigint sum wraps as Spark's non-ANSI sum does.
   */
  @Test
  void floatsStringsAndWrappingSumsMergeOnTheDriverAsSparkComputesThem() {
    String ns = f.namespace("agf");
    String t = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + t + " (id BIGINT, k DOUBLE, s STRING, b BIGINT, y DOUBLE)");
    f.sql("INSERT INTO " + t + " VALUES (1, 0.0, 'a', 9223372036854775806, 1.0), "
        + "(2, 1.5, '\uFFFF', 1, double('NaN')), (3, double('NaN'), 'b', 2, 2.0), "
        + "(4, NULL, NULL, NULL, NULL), (5, 1.5, 'c', 3, -1.0)");
    String select = "SELECT k, count(*) AS n, min(s) AS lo, max(s) AS hi, sum(b) AS sb, "
        + "min(y) AS ly, max(y) AS hy FROM " + t + " GROUP BY k";
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    f.sql("INSERT INTO " + t + " VALUES (6, -0.0, 'z', 9223372036854775806, -0.0), "
        + "(7, double('NaN'), 'a', 5, double('NaN')), (8, 1.5, '\uD83D\uDE00', 4, 7.0)");
    f.sql("UPDATE " + t + " SET y = y + 1 WHERE id = 1"); // arrivals reach both extremes
    assertTrue(explain(v).get("Reason").endsWith(", 0 recomputed from their rows"));
    refreshIncrementally(ns, "v", "on the driver");
    String read = "SELECT k, n, lo, hi, sb, ly, hy FROM ";
    assertEquals(f.rows(read + "(" + select + ")"), f.rows(read + v));
    assertEquals(List.of("\uD83D\uDE00"), f.rows("SELECT hi FROM " + v + " WHERE k = 1.5"));
    // the max of a group and NaN's neighbours leave
    f.sql("DELETE FROM " + t + " WHERE id IN (2, 6)");
    refreshIncrementally(ns, "v");
    assertEquals(f.rows(read + "(" + select + ")"), f.rows(read + v));
  }

  /**
   * Functions the optimizer replaces (left, nvl) in a key, an argument and WHERE, and a change
   * whose own decimal sum overflows decimal(38), merged on the driver and by Spark alike.
   */
  @Test
  void replacedFunctionsAndAnOverflowingChangeGiveSparksResultsOnBothPaths() {
    String conf = "spark.lancerest.mv.query.localRefreshMaxRows";
    for (String max : List.of("262144", "0")) {
      f.spark.conf().set(conf, max);
      try {
        String ns = f.namespace("agr");
        String t = "lance." + ns + ".src";
        f.sql("CREATE TABLE " + t + " (id BIGINT, k STRING, x BIGINT, d DECIMAL(38,0))");
        f.sql("INSERT INTO " + t + " VALUES (1, 'alpha', 1, 1), (2, 'beta', NULL, 2), "
            + "(3, 'gamma', 3, 3)");
        String select = "SELECT left(k, 1) AS k1, sum(nvl(x, 10)) AS sx, sum(d) AS sd, "
            + "count(*) AS n FROM " + t + " WHERE nvl(x, 0) >= 0 GROUP BY left(k, 1)";
        f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
        f.sql("INSERT INTO " + t + " VALUES (4, 'bravo', NULL, 60000000000000000000000000000000000000), "
            + "(5, 'bb', 5, 60000000000000000000000000000000000000), (6, 'gg', 6, 1)");
        refreshIncrementally(ns, "v", max.equals("0") ? "Spark job" : "on the driver");
        String read = "SELECT k1, sx, sd, n FROM ";
        assertEquals(f.rows(read + "(" + select + ")"), f.rows(read + "lance." + ns + ".v"),
            conf + " = " + max);
        assertEquals(List.of("null"), f.rows("SELECT sd FROM lance." + ns + ".v WHERE k1 = 'b'"),
            "the overflowing sum is NULL, as Spark's");
        f.sql("DELETE FROM " + t + " WHERE id = 5");
        refreshIncrementally(ns, "v");
        assertEquals(f.rows(read + "(" + select + ")"), f.rows(read + "lance." + ns + ".v"),
            conf + " = " + max);
      } finally {
        f.spark.conf().unset(conf);
      }
    }
  }

  @Test
  void aGrandTotalWhoseValuesAllLeftStartsAfreshWhenValuesArrive() {
    String ns = f.namespace("agz");
    String t = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + t + " (id BIGINT, y DOUBLE)");
    f.sql("INSERT INTO " + t + " VALUES (1, 1e16), (2, 1.0), (3, 1.0), (4, -1e16)");
    String select = "SELECT count(*) AS n, sum(y) AS s FROM " + t + " WHERE id > 0";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    f.sql("UPDATE " + t + " SET y = NULL");
    refreshIncrementally(ns, "v");
    assertEquals(List.of("4|null"), f.rows("SELECT * FROM lance." + ns + ".v"));
    f.sql("INSERT INTO " + t + " VALUES (5, 0.5)");
    refreshIncrementally(ns, "v");
    assertEquals(List.of("5|0.5"), f.rows("SELECT * FROM lance." + ns + ".v"));
  }

  @Test
  void aColumnNamedLikeTheStateIsAUserColumnInAViewThatDoesNotGroup() {
    String ns = f.namespace("agu");
    String src = source(ns);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS SELECT id, k1 AS __agg_k FROM " + src);
    assertEquals(List.of("id", "__agg_k"),
        Arrays.asList(f.spark.table("lance." + ns + ".v").columns()));
  }

  @Test
  void aggregatesThatCannotBeMaintainedAreRefusedNamingThem() {
    String ns = f.namespace("agr");
    String src = source(ns);
    InvalidViewDefinitionException distinct = assertThrows(
        InvalidViewDefinitionException.class, () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns
            + ".d AS SELECT k1, count(DISTINCT x) AS dx FROM " + src + " GROUP BY k1"));
    assertTrue(distinct.getMessage().contains("count(DISTINCT x)")
        && distinct.getMessage().contains("full recomputation"), distinct.getMessage());
    InvalidViewDefinitionException stddev = assertThrows(InvalidViewDefinitionException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".s AS SELECT k1, stddev(x) AS sd "
            + "FROM " + src + " GROUP BY k1"));
    assertTrue(stddev.getMessage().contains("stddev"), stddev.getMessage());
    InvalidViewDefinitionException expression = assertThrows(
        InvalidViewDefinitionException.class, () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns
            + ".e AS SELECT k1, sum(x) / count(*) AS r FROM " + src + " GROUP BY k1"));
    assertTrue(expression.getMessage().contains("neither a grouping key nor one aggregate"),
        expression.getMessage());
    InvalidViewDefinitionException random = assertThrows(InvalidViewDefinitionException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".r AS SELECT k1, sum(x) AS s FROM "
            + src + " GROUP BY k1 HAVING rand() < 2"));
    assertTrue(random.getMessage().contains("nondeterministic"), random.getMessage());
    InvalidViewDefinitionException subquery = assertThrows(InvalidViewDefinitionException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".q AS SELECT k1, sum(x) AS s FROM "
            + src + " GROUP BY k1 HAVING sum(x) > (SELECT 1)"));
    assertTrue(subquery.getMessage().contains("a subquery"), subquery.getMessage());
    assertTrue(f.rows("SHOW MATERIALIZED VIEWS IN lance." + ns).isEmpty(), "nothing created");
  }

  @Test
  void theDefinitionIsFormatV2WithItsGroupingForOtherClients() {
    String ns = f.namespace("agj");
    String src = source(ns);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT upper(k1) AS uk, sum(x) AS sx FROM "
        + src + " WHERE k2 = 1 GROUP BY upper(k1), k2 HAVING max(y) > 1");
    Map<String, String> info = new LinkedHashMap<>();
    for (Row r : f.sql("DESCRIBE MATERIALIZED VIEW " + v)) {
      info.put(r.getString(0), r.isNullAt(1) ? null : r.getString(1));
    }
    String json = info.get("Definition");
    SourceQuery q = SourceQuery.fromJson(json);
    assertEquals(SourceQuery.FORMAT_V2, q.format(), json);
    assertEquals("upper(k1)", q.aggregation().groupBy().get(0).expr(), json);
    assertEquals("__agg_key_1", q.aggregation().groupBy().get(1).name(), json);
    assertEquals("__agg_1", q.aggregation().aggregates().get(1).name(), json);
    assertEquals("(__agg_1 > CAST(1 AS DOUBLE))", q.aggregation().having(), json);
    String select = "SELECT upper(k1) AS uk, sum(x) AS sx FROM " + src
        + " WHERE k2 = 1 GROUP BY upper(k1), k2 HAVING max(y) > 1";
    assertEquals(f.rows(select), f.rows("SELECT * FROM " + v));
  }
}
