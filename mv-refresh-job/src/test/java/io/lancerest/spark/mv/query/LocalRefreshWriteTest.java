package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryViewTables.location;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.engine.EngineFixture;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.compaction.CompactionOptions;
import scala.Option;

/**
 * The driver-side write of small incremental query refreshes ({@link LocalRefreshWrite}): the
 * view it gives equals the SELECT for every kind of source change, it runs no Spark job, and it
 * hands over to the Spark path (still exact) when it is turned off, the change is too large,
 * the rows exceed the byte cap, or the definition fails on the driver.
 */
class LocalRefreshWriteTest {
  static EngineFixture f;
  private static SparkListener listener;
  static final AtomicInteger JOBS = new AtomicInteger();

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    // a Scala UDF (ScalaUDF expression) in the projection
    f.spark.udf().register("lrw_twice", (UDF1<Integer, Integer>) x -> x == null ? null : x * 2,
        DataTypes.IntegerType);
    // evaluates in Spark tasks only: the driver-side write must hand over, not fail
    f.spark.udf().register("lrw_tasks_only", (UDF1<String, String>) x -> {
      if (org.apache.spark.TaskContext.get() == null) {
        throw new IllegalStateException("lrw_tasks_only outside a task");
      }
      return x == null ? null : x + "!";
    }, DataTypes.StringType);
    listener = new SparkListener() {
      @Override
      public void onJobStart(SparkListenerJobStart e) {
        JOBS.incrementAndGet();
      }
    };
    f.spark.sparkContext().addSparkListener(listener);
  }

  @AfterAll
  static void stop() {
    f.spark.sparkContext().removeSparkListener(listener);
    f.close();
  }

  @AfterEach
  void reset() {
    f.spark.conf().unset(LocalRefreshWrite.MAX_ROWS_CONF);
    f.spark.conf().unset(LocalRefreshWrite.MAX_BYTES_CONF);
  }

  /** NULL names and weights, a UDF, casts (incl. to DECIMAL), a filter rows enter and leave. */
  private static final String SELECT = "SELECT id, upper(name) AS n, lrw_twice(score) AS s2, "
      + "CAST(w AS DECIMAL(12, 3)) AS d, coalesce(name, 'none') AS c, CAST(id AS STRING) AS "
      + "sid, ts FROM %s WHERE score %% 5 <> 0 OR name IS NULL";
  private static final String VIEW_COLUMNS = "id, n, s2, d, c, sid, ts";

  private static String[] viewOver(String ns, int rows) {
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT, w DOUBLE, "
        + "ts TIMESTAMP)");
    insert(src, 0, rows);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + String.format(SELECT, src));
    return new String[] {src, v};
  }

  private static void insert(String table, long from, int rows) {
    f.sql("INSERT INTO " + table + " SELECT /*+ REPARTITION(1) */ id, "
        + "IF(id % 11 = 0, NULL, concat('n', id)), CAST(id % 13 AS INT), "
        + "IF(id % 7 = 0, NULL, id / 8.0), timestamp_seconds(1700000000 + id) FROM range("
        + from + ", " + (from + rows) + ")");
  }

  private static void assertSameAsSelect(String src, String v) {
    QueryViewTables.assertSameAsSelect(f, SELECT, VIEW_COLUMNS, src, v);
  }

  private static long viewVersion(String ns) {
    return Long.parseLong(f.sql("SHOW TBLPROPERTIES lance." + ns + ".v ('current-version')")
        .get(0).getString(1));
  }

  /** Spark jobs started while {@code r} ran. */
  private static <T> int jobsDuring(Supplier<T> r) {
    drainListeners();
    int before = JOBS.get();
    r.get();
    drainListeners();
    return JOBS.get() - before;
  }

  private static void drainListeners() {
    try {
      f.spark.sparkContext().listenerBus().waitUntilEmpty(30_000);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("Spark listener events not delivered in 30 s", e);
    }
  }

  /** Refreshes, asserting the path its write phase took and whether Spark jobs ran. */
  private static RefreshResult refresh(String ns, String path) {
    return refresh(ns, "v", path);
  }

  /** What the last refresh of the test reported. */
  private static Probes probes = new Probes();

  /** {@code "local"} (the driver wrote), {@code "spark"}, or {@code null} (nothing written). */
  private static String writePath() {
    String p = probes.get(RefreshListener.Probe.WRITE_PATH);
    return p == null ? null : p.equals("driver") ? "local" : p.startsWith("spark") ? "spark" : p;
  }

  private static boolean planCompiled() {
    return Boolean.TRUE.equals(probes.get(RefreshListener.Probe.PLAN_COMPILED));
  }

  private static boolean planReused() {
    return Boolean.FALSE.equals(probes.get(RefreshListener.Probe.PLAN_COMPILED));
  }

  private static RefreshResult refresh(String ns, String view, String path) {
    probes = new Probes();
    RefreshResult[] r = new RefreshResult[1];
    int jobs = jobsDuring(() -> r[0] = f.views().refresh(List.of(ns, view),
        RefreshOptions.DEFAULTS, probes));
    assertEquals(path, writePath(), "the write path");
    if (path.equals("local")) {
      assertEquals(0, jobs, "no Spark job on the driver path");
      assertNull(probes.get(RefreshListener.Probe.WRITE_TASKS), "no write tasks");
    } else {
      assertTrue(jobs > 0, "the Spark path runs jobs: " + jobs);
      assertNotNull(probes.get(RefreshListener.Probe.WRITE_TASKS));
    }
    return r[0];
  }

  private static void compact(String ns) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, "src"), a)) {
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true).build());
    }
    f.spark.catalog().refreshTable("lance." + ns + ".src");
  }

  @Test
  void everyKindOfSourceChangeGivesTheSelectWithoutASparkJob() throws Exception {
    String ns = f.namespace("lrw");
    String[] t = viewOver(ns, 300);
    // an append
    insert(t[0], 300, 120);
    RefreshResult r = refresh(ns, "local");
    assertEquals(f.sql("SELECT * FROM (" + String.format(SELECT, t[0]) + ") WHERE id >= 300")
        .size(), r.rowsInserted());
    assertEquals(0, r.rowsDeleted());
    assertSameAsSelect(t[0], t[1]);
    // lance-spark UPDATE (new row ids): rows leave the filter (score 10), enter it (11),
    // stay in it with new values, and a NULL name is set
    f.sql("UPDATE " + t[0] + " SET score = 10 WHERE id IN (1, 2)");
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id IN (5, 10)");
    f.sql("UPDATE " + t[0] + " SET name = NULL, w = NULL WHERE id BETWEEN 20 AND 24");
    refresh(ns, "local");
    assertSameAsSelect(t[0], t[1]);
    assertEquals(List.of("10|N10|22", "5|N5|22"), f.rows("SELECT id, n, s2 FROM " + t[1]
        + " WHERE id IN (1, 2, 5, 10)"));
    // updates in place (same row id, newer update version; the merge sets w and ts to NULL)
    QueryRefreshAtomicityTest.mergeUpdate(location(f, ns, "src"), new long[] {3, 7, 301},
        new int[] {2, 5, 4});
    f.spark.catalog().refreshTable(t[0]);
    refresh(ns, "local");
    assertSameAsSelect(t[0], t[1]);
    assertEquals(List.of("301|UPD301|8|null|upd301", "3|UPD3|4|null|upd3"),
        f.rows("SELECT id, n, s2, d, c FROM " + t[1] + " WHERE id IN (3, 7, 301)"));
    // deletes only: nothing to read, no write at all
    f.sql("DELETE FROM " + t[0] + " WHERE id % 9 = 0");
    probes = new Probes();
    assertEquals(0, jobsDuring(() -> f.views().refresh(List.of(ns, "v"),
        RefreshOptions.DEFAULTS, probes)));
    assertNull(writePath(), "no changed fragment to read");
    assertSameAsSelect(t[0], t[1]);
    // compaction (rows move, unchanged: kept, not rewritten; not even read, as the source's
    // commits say that no row changed in place) plus an append
    List<String> before = f.rows("SELECT __source_row_id, " + VIEW_COLUMNS + " FROM " + t[1]);
    compact(ns);
    probes = new Probes();
    RefreshResult[] compacted = new RefreshResult[1];
    assertEquals(0, jobsDuring(() -> compacted[0] = f.views().refresh(List.of(ns, "v"),
        RefreshOptions.DEFAULTS, probes)));
    assertEquals(List.of(), probes.get(RefreshListener.Probe.SOURCE_FRAGMENTS_READ),
        "the compacted fragment is not read");
    assertNull(writePath(), "nothing to write");
    r = compacted[0];
    assertEquals(0, r.rowsInserted(), "compaction alone rewrites nothing");
    assertEquals(0, r.rowsDeleted());
    assertEquals(before, f.rows("SELECT __source_row_id, " + VIEW_COLUMNS + " FROM " + t[1]));
    insert(t[0], 420, 30);
    f.sql("UPDATE " + t[0] + " SET score = score + 1 WHERE id BETWEEN 100 AND 104");
    compact(ns);
    refresh(ns, "local");
    assertSameAsSelect(t[0], t[1]);
  }

  @Test
  void structListAndDateColumnsAreReadOnTheDriver() {
    String ns = f.namespace("nst");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, s STRUCT<a: INT, b: STRING>, "
        + "tags ARRAY<STRING>, d DATE)");
    String rows = "SELECT /*+ REPARTITION(1) */ id, named_struct('a', CAST(id %% 4 AS INT), "
        + "'b', IF(id %% 3 = 0, NULL, concat('b', id))), IF(id %% 5 = 0, NULL, array(concat('t', "
        + "id), 'x')), date_add(DATE'2024-01-01', CAST(id AS INT)) FROM range(%d, %d)";
    f.sql("INSERT INTO " + src + " " + String.format(rows, 0, 50));
    String select = "SELECT id, s.a + 1 AS sa, upper(s.b) AS sb, size(tags) AS nt, tags, s, "
        + "date_format(d, 'yyyy-MM') AS m FROM " + src + " WHERE s.a <> 2";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    f.sql("INSERT INTO " + src + " " + String.format(rows, 50, 90));
    f.sql("UPDATE " + src + " SET s = named_struct('a', 9, 'b', 'upd') WHERE id IN (1, 2)");
    refresh(ns, "local");
    assertEquals(f.rows(select), f.rows("SELECT id, sa, sb, nt, tags, s, m FROM lance." + ns
        + ".v"));
  }

  @Test
  void aPushedNullCheckAloneIsEvaluatedOnTheDriverWithTheSameRows() {
    // Spark infers IS NOT NULL(score) from `score % 3 <> 0`; lance-spark pushes only that.
    String ns = f.namespace("nul");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, score INT)");
    f.sql("INSERT INTO " + src + " VALUES (1, 1), (2, NULL), (3, 3), (4, 4)");
    String select = "SELECT id, score FROM " + src + " WHERE score % 3 <> 0";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    // a filter that is nothing but the NULL check: no Spark filter is left after the scan
    String onlyCheck = "SELECT id, score FROM " + src + " WHERE score IS NOT NULL";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".w AS " + onlyCheck);
    f.sql("INSERT INTO " + src + " VALUES (5, NULL), (6, 5), (7, 6)");
    refresh(ns, "local");
    assertEquals(f.rows(select), f.rows("SELECT id, score FROM lance." + ns + ".v"));
    assertEquals(List.of("1", "4", "6"), f.rows("SELECT id FROM lance." + ns + ".v"));
    probes = new Probes();
    f.views().refresh(List.of(ns, "w"), RefreshOptions.DEFAULTS, probes);
    assertEquals("local", writePath());
    assertEquals(List.of("1", "3", "4", "6", "7"), f.rows("SELECT id FROM lance." + ns + ".w"));
  }

  @Test
  void aDoubleComparedWithZeroKeepsSparksSemanticsOnTheDriver() {
    // Lance orders -0.0 below 0.0 (Spark: equal), so `x >= 0` is not pushed down (the view
    // built through lance-spark left -0.0 out when it was): Spark's rows on both paths
    String ns = f.namespace("psh");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, x DOUBLE)");
    f.sql("INSERT INTO " + src + " VALUES (1, 0.0), (2, CAST('-0.0' AS DOUBLE)), (3, 1.5)");
    String select = "SELECT id, x FROM " + src + " WHERE x >= 0";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    f.sql("INSERT INTO " + src + " VALUES (4, CAST('-0.0' AS DOUBLE)), (5, 2.0)");
    refresh(ns, "local");
    assertEquals(f.rows(select), f.rows("SELECT id, x FROM lance." + ns + ".v"));
    assertEquals(List.of("1", "2", "3", "4", "5"),
        f.rows("SELECT id FROM lance." + ns + ".v"));
  }

  @Test
  void pushedFiltersOfEveryKindStayOnTheDriverAndGiveTheSelect() {
    String ns = f.namespace("pkd");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, x DOUBLE, c STRING, ts TIMESTAMP, score INT)");
    // -0.0, NaN and NULL doubles; non-ASCII strings; timestamps an hour apart (the literal
    // below falls inside their range in any session time zone)
    String rows = "SELECT /*+ REPARTITION(1) */ id, CASE id %% 6 WHEN 0 THEN "
        + "CAST('-0.0' AS DOUBLE) WHEN 1 THEN CAST('NaN' AS DOUBLE) WHEN 2 THEN NULL ELSE "
        + "id / 10.0 - 1 END, CASE id %% 4 WHEN 0 THEN 'ça va' WHEN 1 THEN 'its' WHEN 2 THEN "
        + "NULL ELSE concat('c', id) END, timestamp_seconds(1700000000 + id * 3600), "
        + "CAST(id %% 13 AS INT) FROM range(%d, %d)";
    f.sql("INSERT INTO " + src + " " + String.format(rows, 0, 40));
    Map<String, String> where = new java.util.LinkedHashMap<>();
    where.put("vf", "x > 0.5");
    where.put("vs", "c = 'ça va'");
    where.put("vi", "c IN ('its', 'ça va', 'c7') OR score IN (1, 3)");
    where.put("vt", "ts >= TIMESTAMP'2023-11-16 00:00:00'");
    where.put("vm", "x >= 0 AND score % 5 <> 0");
    String columns = "id, x, c, ts, score";
    for (var e : where.entrySet()) {
      f.sql("CREATE MATERIALIZED VIEW lance." + ns + "." + e.getKey() + " AS SELECT " + columns
          + " FROM " + src + " WHERE " + e.getValue());
    }
    // rows enter (appended, updated into the filter) and leave (updated out of it)
    f.sql("INSERT INTO " + src + " " + String.format(rows, 40, 70));
    f.sql("UPDATE " + src + " SET x = CAST('-0.0' AS DOUBLE), c = 'ça va', score = 4 "
        + "WHERE id IN (3, 9)");
    f.sql("UPDATE " + src + " SET x = 0.75, c = 'its', score = 1, ts = TIMESTAMP'2030-01-01 "
        + "00:00:00' WHERE id IN (0, 2, 6)");
    for (var e : where.entrySet()) {
      refresh(ns, e.getKey(), "local");
      String select = "SELECT " + columns + " FROM " + src + " WHERE " + e.getValue();
      List<String> expected = f.rows(select);
      assertFalse(expected.isEmpty(), select);
      assertEquals(expected, f.rows("SELECT " + columns + " FROM lance." + ns + "."
          + e.getKey()), e.getValue());
    }
    // `x >= 0` takes -0.0 in, as Spark has it (Lance alone would leave it out)
    assertEquals(List.of("3", "9"),
        f.rows("SELECT id FROM lance." + ns + ".vm WHERE id IN (3, 9)"));
  }

  @Test
  void aQuoteInAStringLiteralIsFilteredBySparkOnBothPathsWithTheSelectsRows() {
    // lance-spark writes a pushed string into Lance's filter without escaping its quotes:
    // `name = 'O\'Brien'` failed to parse, and `'zz\' OR \'a\'=\'a'` matched every row.
    // Such filters stay with Spark on the Spark path, so the driver must not hand them to
    // Lance either.
    String ns = f.namespace("quo");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING)");
    f.sql("INSERT INTO " + src + " VALUES (1, 'O\\'Brien'), (2, 'a'), (3, 'zz'), "
        + "(4, 'it\\'s'), (5, 'a\\\\')");
    Map<String, String> where = new java.util.LinkedHashMap<>();
    where.put("veq", "name = 'O\\'Brien'");
    where.put("vne", "name <> 'O\\'Brien' AND id > 1");
    where.put("vin", "name IN ('O\\'Brien', 'it\\'s', 'a\\\\')");
    where.put("vinj", "name = 'zz\\' OR \\'a\\'=\\'a' OR id = 2");
    for (var e : where.entrySet()) {
      f.sql("CREATE MATERIALIZED VIEW lance." + ns + "." + e.getKey() + " AS SELECT id, name "
          + "FROM " + src + " WHERE " + e.getValue());
    }
    // after both rounds: 1 and 4 O'Brien, 6 and 8 it's, 5 a\, 3 and 7 zz, 2 a
    Map<String, List<String>> ids = Map.of("veq", List.of("1", "4"),
        "vne", List.of("2", "3", "5", "6", "7", "8"), "vin", List.of("1", "4", "5", "6", "8"),
        "vinj", List.of("2"));
    String[] rounds = {"(6, 'O\\'Brien'), (7, 'zz')", "(8, 'it\\'s')"};
    for (int round = 0; round < 2; round++) {
      f.spark.conf().set(LocalRefreshWrite.MAX_ROWS_CONF, round == 0 ? "1000" : "0");
      f.sql("INSERT INTO " + src + " VALUES " + rounds[round]);
      if (round == 1) {
        f.sql("UPDATE " + src + " SET name = 'O\\'Brien' WHERE id = 4");
        f.sql("UPDATE " + src + " SET name = 'it\\'s' WHERE id = 6");
      }
      for (var e : where.entrySet()) {
        refresh(ns, e.getKey(), round == 0 ? "local" : "spark");
        String select = "SELECT id, name FROM " + src + " WHERE " + e.getValue();
        assertEquals(f.rows(select), f.rows("SELECT id, name FROM lance." + ns + "."
            + e.getKey()), e.getValue());
      }
    }
    for (var e : ids.entrySet()) {
      assertEquals(e.getValue(), f.rows("SELECT id FROM lance." + ns + "." + e.getKey()),
          where.get(e.getKey()));
    }
  }

  @Test
  void theSparkPathRunsWhenTurnedOffOrTheChangeIsTooLargeAndStaysExact() {
    String ns = f.namespace("thr");
    String[] t = viewOver(ns, 100);
    appendAndRefresh(ns, t, LocalRefreshWrite.MAX_ROWS_CONF, "0", 100, 40, "spark");
    // 40 changed rows, 39 allowed
    appendAndRefresh(ns, t, LocalRefreshWrite.MAX_ROWS_CONF, "39", 140, 40, "spark");
    appendAndRefresh(ns, t, LocalRefreshWrite.MAX_ROWS_CONF, "40", 180, 40, "local");
  }

  /**
   * With Spark conf {@code key = value}: appends ids {@code [from, from + n)} to the source,
   * refreshes, and checks the path taken and that the view equals the SELECT.
   */
  private static void appendAndRefresh(String ns, String[] t, String key, String value,
      long from, int n, String path) {
    f.spark.conf().set(key, value);
    insert(t[0], from, n);
    refresh(ns, path);
    assertSameAsSelect(t[0], t[1]);
  }

  @Test
  void rowsBeyondTheByteCapFallBackToTheSparkPath() {
    String ns = f.namespace("cap");
    String[] t = viewOver(ns, 50);
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id = 5");
    appendAndRefresh(ns, t, LocalRefreshWrite.MAX_BYTES_CONF, "1k", 50, 200, "spark");
    appendAndRefresh(ns, t, LocalRefreshWrite.MAX_BYTES_CONF, "1m", 250, 200, "local");
  }

  @Test
  void anExpressionFailingOnTheDriverHandsOverToTheSparkPath() {
    String ns = f.namespace("drv");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT, w DOUBLE, "
        + "ts TIMESTAMP)");
    insert(src, 0, 40);
    String select = "SELECT id, lrw_tasks_only(name) AS n FROM " + src + " WHERE score > 2";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    insert(src, 40, 30);
    refresh(ns, "spark");
    assertEquals(f.rows(select), f.rows("SELECT id, n FROM lance." + ns + ".v"));
  }

  @Test
  void aFailureBeforeTheCommitLeavesTheViewAndTheNextRefreshConverges() {
    String ns = f.namespace("bcl");
    String[] t = viewOver(ns, 60);
    insert(t[0], 60, 20);
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id = 5");
    long version = viewVersion(ns);
    List<String> before = f.rows("SELECT * FROM " + t[1]);
    probes = new Probes().beforeCommit(() -> {
      throw new IllegalStateException("crash before commit");
    });
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS, probes));
    assertEquals("crash before commit", e.getMessage());
    assertEquals("local", writePath());
    assertEquals(version, viewVersion(ns));
    assertEquals(before, f.rows("SELECT * FROM " + t[1]));
    refresh(ns, "local");
    assertSameAsSelect(t[0], t[1]);
  }

  @Test
  void aWriteFailingOnTheDriverCommitsNothing() {
    String ns = f.namespace("wf");
    String[] t = viewOver(ns, 30);
    insert(t[0], 30, 20);
    long version = viewVersion(ns);
    List<String> before = f.rows("SELECT * FROM " + t[1]);
    Probes failing = new Probes().afterTaskBatch(p -> {
      throw new IllegalStateException("injected write failure");
    });
    QueryRefreshException e = assertThrows(QueryRefreshException.class,
        () -> f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS, failing));
    assertTrue(e.getMessage().startsWith("Refresh of view lance." + ns + ".v (job "),
        e.getMessage());
    assertTrue(e.getMessage().endsWith(") failed while writing its new rows on the driver; "
        + "nothing was committed, the view is unchanged: injected write failure"),
        e.getMessage());
    assertEquals(version, viewVersion(ns));
    assertEquals(before, f.rows("SELECT * FROM " + t[1]));
    refresh(ns, "local");
    assertSameAsSelect(t[0], t[1]);
  }

  @Test
  void anUnreadableThresholdIsRefusedNamingTheConf() {
    String ns = f.namespace("bad");
    String[] t = viewOver(ns, 10);
    insert(t[0], 10, 5);
    f.spark.conf().set(LocalRefreshWrite.MAX_ROWS_CONF, "lots");
    QueryRefreshException e = assertThrows(QueryRefreshException.class,
        () -> f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS));
    assertEquals("Spark conf spark.lancerest.mv.query.localRefreshMaxRows = 'lots' is not a "
        + "number of rows: For input string: \"lots\"", e.getMessage());
  }

  // ------------------------------------------------- the compiled definition, reused

  /** A view of built-in functions only; {@code extra} is one more projected column. */
  private static String[] builtinView(String ns, String extra) {
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT, w DOUBLE, "
        + "ts TIMESTAMP)");
    insert(src, 0, 60);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, upper(name) AS n, " + extra
        + " FROM " + src + " WHERE score % 5 <> 0");
    return new String[] {src, v};
  }

  private static void assertViewEqualsSelect(String[] t, String extra, String columns) {
    QueryViewTables.assertSameAsSelect(f, "SELECT id, upper(name) AS n, " + extra
        + " FROM %s WHERE score %% 5 <> 0", "id, n, " + columns, t[0], t[1]);
  }

  @Test
  void theNextRefreshReusesTheCompiledDefinitionAndStaysExact() {
    String ns = f.namespace("reuse");
    String[] t = builtinView(ns, "score * 2 AS s2");
    // as in a new session: the first plan sets lance-spark's path catalog conf, and is kept
    // under the confs it leaves, those the next refresh sees
    f.spark.conf().unset("spark.sql.catalog." + io.lancerest.spark.mv.fragments.LanceReads.PATH_CATALOG);
    insert(t[0], 60, 30);
    refresh(ns, "local");
    assertTrue(planCompiled());
    f.sql("UPDATE " + t[0] + " SET score = score + 1 WHERE id < 10");
    insert(t[0], 90, 30);
    refresh(ns, "local");
    assertTrue(planReused(), "the second refresh reuses the first one's plan");
    assertFalse(planCompiled(), "and builds no Spark plan");
    f.sql("DELETE FROM " + t[0] + " WHERE id >= 100");
    insert(t[0], 120, 30);
    refresh(ns, "local");
    assertTrue(planReused());
    assertViewEqualsSelect(t, "score * 2 AS s2", "s2");
  }

  @Test
  void aChangedSessionTimeZoneCompilesTheDefinitionAgain() {
    String ns = f.namespace("tz");
    String[] t = builtinView(ns, "hour(ts) AS h");
    try {
      f.spark.conf().set("spark.sql.session.timeZone", "UTC");
      insert(t[0], 60, 30);
      refresh(ns, "local");
      insert(t[0], 90, 30);
      refresh(ns, "local");
      assertTrue(planReused());
      f.spark.conf().set("spark.sql.session.timeZone", "Asia/Tokyo");
      insert(t[0], 120, 30);
      refresh(ns, "local");
      assertFalse(planReused(), "another time zone is another plan");
      // the new rows have Tokyo hours, as the SELECT gives them now
      String newRows = " WHERE id >= 120";
      assertEquals(f.rows("SELECT id, hour(ts) FROM " + t[0] + newRows + " AND score % 5 <> 0"),
          f.rows("SELECT id, h FROM " + t[1] + newRows));
      // ts = 1700000000 + id seconds: 2023-11-14 22:14:21 UTC for id 61, 07:15:20 in Tokyo
      // (the next day) for id 120
      assertEquals(List.of("120|7", "61|22"), f.rows("SELECT id, h FROM " + t[1]
          + " WHERE id IN (61, 120)"));
    } finally {
      f.spark.conf().unset("spark.sql.session.timeZone");
    }
  }

  @Test
  void aFunctionRegisteredUnderABuiltInNameIsCalledFromTheNextRefresh() {
    String ns = f.namespace("shadow");
    String[] t = builtinView(ns, "soundex(name) AS sx");
    FunctionIdentifier soundex = new FunctionIdentifier("soundex", Option.empty(),
        Option.empty());
    try {
      insert(t[0], 60, 30);
      refresh(ns, "local");
      insert(t[0], 90, 30);
      refresh(ns, "local");
      assertTrue(planReused());
      // Spark now calls the UDF for soundex(...): so must the refresh
      f.spark.udf().register("soundex", (UDF1<String, String>) x -> "shadowed",
          DataTypes.StringType);
      insert(t[0], 120, 30);
      refresh(ns, "local");
      assertFalse(planReused(), "a function of that name was registered since");
      assertEquals(List.of("shadowed"), f.rows("SELECT DISTINCT sx FROM " + t[1]
          + " WHERE id >= 120 AND n IS NOT NULL"));
      assertTrue(f.rows("SELECT DISTINCT sx FROM " + t[1] + " WHERE id < 120")
          .stream().noneMatch(r -> r.equals("shadowed")), "rows refreshed before keep theirs");
    } finally {
      // give the shared session its built-in soundex back
      FunctionRegistry builtin = FunctionRegistry.builtin();
      f.spark.sessionState().functionRegistry().registerFunction(soundex,
          builtin.lookupFunction(soundex).get(), builtin.lookupFunctionBuilder(soundex).get());
    }
  }

  /**
   * Functions of the clock or the session never reach a compiled plan: CREATE and every refresh
   * refuse them ({@code ViewBadInputTest} has the refresh's refusal).
   */
  @Test
  void onlyPlansOfBuiltInFunctionsAreKept() {
    assertEquals(List.of("upper", "abs"), names(keptFunctions("upper(CAST(id AS STRING))",
        "abs(id) > 1")));
    assertNull(keptFunctions("lrw_twice(CAST(id AS INT))", null), "a UDF");
    assertNull(keptFunctions("CAST(id AS STRING)", "lrw_twice(CAST(id AS INT)) > 1"),
        "in the filter too");
    assertEquals(List.of(), names(keptFunctions("CAST(id AS STRING)", "id % 2 = 0")),
        "no function at all");
    assertNull(keptFunctions("IDENTIFIER('soundex')(CAST(id AS STRING))", null),
        "a function named by a string cannot be checked again");
  }

  @Test
  void theKeyHoldsTheReadOptionsThatChangeAPlanButNoCredentials() {
    SourceQuery q = SourceQuery.of(List.of("ns", "src"), null,
        List.of(new SourceQuery.OutputColumn("c", "id")), null, null);
    CompiledPlans.Key a = key(q, Map.of("aws_secret_access_key", "s3cr3t-1",
        "expires_at_millis", "1"));
    CompiledPlans.Key b = key(q, Map.of("aws_secret_access_key", "s3cr3t-2",
        "expires_at_millis", "2"));
    assertEquals(a, b, "vended credentials change every refresh; the plan does not");
    assertNotEquals(a, key(q, Map.of("pushDownFilters", "false")), "what lance-spark pushes");
    assertFalse(a.toString().contains("s3cr3t"), a.toString());
  }

  private static CompiledPlans.Key key(SourceQuery q, Map<String, String> storage) {
    return CompiledPlans.key(f.spark, new ViewTables("lance.ns.v", "file:///v", Map.of(),
        "file:///src", storage), q, new org.apache.spark.sql.types.StructType(), List.of());
  }

  /** {@link CompiledPlans#cacheableFunctions} for a definition over {@code range(3)}. */
  private static List<FunctionIdentifier> keptFunctions(String expr, String filter) {
    org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> d = f.spark.range(3).toDF();
    if (filter != null) {
      d = d.where(filter);
    }
    d = d.selectExpr(expr);
    SourceQuery q = SourceQuery.of(List.of("ns", "src"), null,
        List.of(new SourceQuery.OutputColumn("c", expr)), filter, null);
    return CompiledPlans.cacheableFunctions(f.spark, q, d.queryExecution().analyzed());
  }

  private static List<String> names(List<FunctionIdentifier> ids) {
    assertNotNull(ids, "kept");
    return ids.stream().map(FunctionIdentifier::funcName).toList();
  }
}
