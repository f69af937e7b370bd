package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.read.FragmentHazard;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.Fragment;

/**
 * Views that look after themselves: maintenance after each refresh commit (compaction past the
 * policy's thresholds, old versions removed past its retention), OPTIMIZE MATERIALIZED VIEW on
 * demand, and a failing maintenance that never fails the refresh.
 */
class ViewMaintenanceTest {
  static EngineFixture f;
  static String ns;
  private static final String CONF = "spark.lancerest.mv.maintenance.";

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("mt");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  @AfterEach
  void resetPolicy() {
    for (String k : List.of("enabled", "maxFragments", "retention", "maxSmallShare")) {
      f.spark.conf().unset(CONF + k);
    }
  }

  private static int fragments(String name) {
    return TableStats.fragments(f, ns, name);
  }

  private static int versions(String name) {
    return TableStats.versions(f, ns, name);
  }

  private static String source(String name) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, v BIGINT)");
    f.sql("INSERT INTO " + t + " SELECT id, id FROM range(0, 1000, 1, 1)");
    return t;
  }

  private static void insertAndRefresh(String t, String v, int round) {
    f.sql("INSERT INTO " + t + " SELECT id + " + (10_000 * round) + ", id FROM range(0, 20, 1, 1)");
    f.sql("REFRESH MATERIALIZED VIEW " + v);
  }

  @Test
  void aViewRefreshedManyTimesStaysCompactAndEqualsItsSelect() {
    String t = source("s1");
    String v = "lance." + ns + ".v1";
    String select = "SELECT id, v * 2 AS v2 FROM " + t + " WHERE id % 3 <> 0";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + select);
    // maintenance is on by default
    f.spark.conf().set(CONF + "maxFragments", "6");
    f.spark.conf().set(CONF + "retention", "0s");
    for (int round = 1; round <= 20; round++) {
      insertAndRefresh(t, v, round);
      // one scattered UPDATE a round: its view row is deleted in an older fragment
      f.sql("UPDATE " + t + " SET v = v + 1 WHERE id = " + (round * 37 % 1000));
      f.sql("REFRESH MATERIALIZED VIEW " + v);
      assertTrue(fragments("v1") <= 7, "round " + round + ": " + fragments("v1")
          + " fragments");
    }
    assertEquals(f.rows(select), f.rows("SELECT id, v2 FROM " + v));
    assertTrue(versions("v1") <= 17, versions("v1") + " versions kept with retention 0s: "
        + "old versions are looked for every 16 versions");
    f.sql("OPTIMIZE MATERIALIZED VIEW " + v);
    assertEquals(1, versions("v1"), "OPTIMIZE MATERIALIZED VIEW looks for old versions at once");
    List<Row> jobs = f.sql("SHOW JOBS FOR " + v);
    assertTrue(jobs.stream().anyMatch(r -> String.valueOf((Object) r.getAs("message"))
        .startsWith("maintenance: compacted ")), jobs.toString());
    assertCompactedByTheView("v1");
  }

  /**
   * The view's own compaction: no fragment has a rewritten row-id sequence (lance-core's
   * compaction of fragments with deletions writes those), every fragment has its source row
   * range, and no source row is in the view twice.
   */
  private static void assertCompactedByTheView(String name) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(TableStats.location(f, ns, name), a)) {
      Map<Integer, FragmentSourceRanges.Entry> ranges = FragmentSourceRanges.parse(
          ds.getSchema().getCustomMetadata().get(FragmentSourceRanges.KEY));
      for (Fragment fr : ds.getFragments()) {
        assertNotEquals(FragmentHazard.REWRITTEN_ROW_IDS, FragmentHazard.of(fr.metadata()),
            "fragment " + fr.getId());
        FragmentSourceRanges.Entry e = ranges.get(fr.getId());
        assertTrue(e != null && e.fileTag().equals(FragmentSourceRanges.fileTag(fr.metadata())),
            "fragment " + fr.getId() + " has no source range: " + ranges);
      }
    }
    Row dup = f.sql("SELECT count(*), count(DISTINCT __source_row_id) FROM lance." + ns + "."
        + name).get(0);
    assertEquals(dup.getLong(0), dup.getLong(1), "a source row is in view " + name + " twice");
  }

  @Test
  void aViewsPropertiesOverrideTheSessionPolicy() {
    String t = source("s4");
    String v = "lance." + ns + ".v4";
    f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES ("
        + "'lancerest.mv.maintenance.enabled' = 'false') AS SELECT id, v FROM " + t);
    f.spark.conf().set(CONF + "maxFragments", "4");
    int before = fragments("v4");
    for (int round = 1; round <= 6; round++) {
      insertAndRefresh(t, v, round);
    }
    assertEquals(before + 6, fragments("v4"), "maintenance is off for this view");

    f.sql("ALTER TABLE " + v + " SET TBLPROPERTIES ('lancerest.mv.maintenance.enabled' = "
        + "'true', 'lancerest.mv.maintenance.maxSmallShare' = '1')");
    insertAndRefresh(t, v, 7);
    assertTrue(fragments("v4") <= 3, fragments("v4") + " fragments: the property turned "
        + "maintenance on, and the session's maxFragments applies");
    assertEquals(f.rows("SELECT id, v FROM " + t), f.rows("SELECT id, v FROM " + v));
    assertCompactedByTheView("v4");

    f.sql("ALTER TABLE " + v + " SET TBLPROPERTIES ('lancerest.mv.maintenance.retention' = "
        + "'soon')");
    Row done = f.sql("REFRESH MATERIALIZED VIEW " + v + " WITH (force = true)").get(0);
    assertEquals("DONE", done.getAs("status"), done.toString());
    Row job = f.sql("SHOW JOBS FOR " + v + " LIMIT 1").get(0);
    assertTrue(String.valueOf((Object) job.getAs("message")).contains("view properties "
        + "lancerest.mv.maintenance.*) is not valid"), job.toString());
    InvalidOptionException e = assertThrows(InvalidOptionException.class,
        () -> f.sql("OPTIMIZE MATERIALIZED VIEW " + v));
    assertTrue(e.getMessage().startsWith("Cannot optimize materialized view " + v + ": The "
        + "maintenance policy"), e.getMessage());
  }

  @Test
  void withMaintenanceOffEveryRefreshAddsAFragment() {
    String t = source("s2");
    String v = "lance." + ns + ".v2";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, v FROM " + t);
    f.spark.conf().set(CONF + "enabled", "false");
    int before = fragments("v2");
    for (int round = 1; round <= 5; round++) {
      insertAndRefresh(t, v, round);
    }
    assertEquals(before + 5, fragments("v2"));

    Row r = f.sql("OPTIMIZE MATERIALIZED VIEW " + v).get(0);
    assertEquals(before + 5, r.getInt(0), r.toString());
    assertEquals(1, r.getInt(1), r.toString());
    assertEquals(1, fragments("v2"));
    insertAndRefresh(t, v, 6);
    assertEquals(f.rows("SELECT id, v FROM " + t), f.rows("SELECT id, v FROM " + v));
  }

  @Test
  void aFailingMaintenanceNeverFailsTheRefreshAndIsInTheJobLog() {
    String t = source("s3");
    String v = "lance." + ns + ".v3";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, v FROM " + t);
    f.spark.conf().set(CONF + "enabled", "true");
    f.spark.conf().set(CONF + "maxFragments", "-1");
    f.sql("INSERT INTO " + t + " VALUES (5000, 1)");
    Row done = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
    assertEquals("DONE", done.getAs("status"), done.toString());
    assertEquals(f.rows("SELECT id, v FROM " + t), f.rows("SELECT id, v FROM " + v));
    Row job = f.sql("SHOW JOBS FOR " + v + " LIMIT 1").get(0);
    assertTrue(String.valueOf((Object) job.getAs("message")).startsWith("maintenance failed "
        + "(the refresh stands): IllegalArgumentException: The maintenance policy (session "
        + "confs spark.lancerest.mv.maintenance.*, view properties lancerest.mv.maintenance.*) "
        + "is not valid (out of range)"), job.toString());
  }

  @Test
  void optimizeKeepsChunkerViewsRefreshable() {
    String t = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + t + " (id BIGINT, doc STRING)");
    f.sql("INSERT INTO " + t + " VALUES (1, 'alpha beta gamma'), (2, 'delta epsilon')");
    String v = "lance." + ns + ".chunks";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'doc', "
        + "chunk_size = '6') AS SELECT id, doc FROM " + t);
    for (int i = 3; i < 8; i++) {
      f.sql("INSERT INTO " + t + " VALUES (" + i + ", 'word" + i + " more text " + i + "')");
      f.sql("REFRESH MATERIALIZED VIEW " + v);
    }
    f.sql("OPTIMIZE MATERIALIZED VIEW " + v);
    f.sql("UPDATE " + t + " SET doc = 'changed words here' WHERE id = 4");
    f.sql("DELETE FROM " + t + " WHERE id = 1");
    f.sql("REFRESH MATERIALIZED VIEW " + v);
    String fresh = "lance." + ns + ".chunks_fresh";
    f.sql("CREATE MATERIALIZED VIEW " + fresh + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'doc', "
        + "chunk_size = '6') AS SELECT id, doc FROM " + t);
    String cols = "id, chunk, char_offset";
    assertEquals(f.rows("SELECT " + cols + " FROM " + fresh), f.rows("SELECT " + cols + " FROM "
        + v));
  }

  /**
   * lance-spark's OPTIMIZE and VACUUM (lance-core's compaction, which carries row ids over) and
   * OPTIMIZE MATERIALIZED VIEW, on a view of each kind: the next refresh after a change of the
   * source equals a view created from scratch.
   */
  @Test
  void everyKindStaysCorrectAfterOptimizeAndVacuum() {
    String query = "AS SELECT id, cat, score * 2 AS s2 FROM %s WHERE score % 3 <> 0";
    String chunker = "USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS "
        + "(input_columns = 'doc', chunk_size = '6') AS SELECT id, doc FROM %s";
    String udtf = "USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY cat OPTIONS "
        + "(k = 2, order_by = 'score') AS SELECT id, cat, score FROM %s";
    Map<String, String[]> kinds = new java.util.LinkedHashMap<>();
    kinds.put("query", new String[] {query, "id, cat, s2"});
    kinds.put("chunker", new String[] {chunker, "id, chunk, char_offset"});
    kinds.put("udtf", new String[] {udtf, "id, cat, score, rank"});
    for (Map.Entry<String, String[]> k : kinds.entrySet()) {
      String t = "lance." + ns + ".src_" + k.getKey();
      f.sql("CREATE TABLE " + t + " (id BIGINT, cat STRING, score BIGINT, doc STRING)");
      // distinct scores: TopKUdtf breaks ties by arrival order, which a compaction changes
      f.sql("INSERT INTO " + t + " SELECT id, concat('c', id % 4), id * 1000 + id * 7 % 100, "
          + "concat('words of row ', id) FROM range(0, 40, 1, 1)");
      String v = "lance." + ns + ".kv_" + k.getKey();
      f.sql("CREATE MATERIALIZED VIEW " + v + " " + k.getValue()[0].replace("%s", t));
      for (int round = 1; round <= 4; round++) {
        f.sql("INSERT INTO " + t + " SELECT id, concat('c', id % 4), id * 1000 + id * 7 % 100, "
            + "concat('late row ', id) FROM range(" + (round * 100) + ", " + (round * 100 + 5)
            + ", 1, 1)");
        f.sql("UPDATE " + t + " SET score = score + 1, doc = 'updated text' WHERE id = "
            + (round * 9));
        f.sql("REFRESH MATERIALIZED VIEW " + v);
      }
      String cols = k.getValue()[1];
      f.sql("OPTIMIZE " + v);
      f.sql("VACUUM " + v);
      f.sql("INSERT INTO " + t + " VALUES (900, 'c1', 99, 'a new row'), (901, 'c2', 98, 'and "
          + "one more')");
      f.sql("UPDATE " + t + " SET score = 97, doc = 'changed again' WHERE id IN (3, 22)");
      f.sql("DELETE FROM " + t + " WHERE id IN (5, 17)");
      f.sql("REFRESH MATERIALIZED VIEW " + v);
      String fresh = v + "_fresh";
      f.sql("CREATE MATERIALIZED VIEW " + fresh + " " + k.getValue()[0].replace("%s", t));
      assertEquals(f.rows("SELECT " + cols + " FROM " + fresh),
          f.rows("SELECT " + cols + " FROM " + v), k.getKey() + " view after OPTIMIZE, VACUUM");

      f.sql("OPTIMIZE MATERIALIZED VIEW " + v);
      f.sql("DELETE FROM " + t + " WHERE id IN (900, 8)");
      f.sql("UPDATE " + t + " SET score = 1, doc = 'last change' WHERE id = 30");
      f.sql("REFRESH MATERIALIZED VIEW " + v);
      f.sql("REFRESH MATERIALIZED VIEW " + fresh + " WITH (force = true)");
      assertEquals(f.rows("SELECT " + cols + " FROM " + fresh),
          f.rows("SELECT " + cols + " FROM " + v), k.getKey()
          + " view after OPTIMIZE MATERIALIZED VIEW");
    }
  }

  /**
   * A view whose source is another view: every commit of the upstream view is an Overwrite,
   * and its compaction gives the rows it rewrites new row ids. The downstream view stays
   * incremental (the fragments the upstream commit kept are not recomputed) and correct.
   */
  @Test
  void aViewOverACompactedViewStaysIncrementalAndCorrect() {
    String t = source("s5");
    String u = "lance." + ns + ".up5";
    String d = "lance." + ns + ".down5";
    f.sql("CREATE MATERIALIZED VIEW " + u + " AS SELECT id, v + 1 AS w FROM " + t);
    String downSelect = "SELECT id, w * 10 AS x FROM " + u + " WHERE id % 2 = 0";
    f.sql("CREATE MATERIALIZED VIEW " + d + " AS " + downSelect);
    for (int round = 1; round <= 3; round++) {
      insertAndRefresh(t, u, round);
      f.sql("REFRESH MATERIALIZED VIEW " + d);
    }
    // one upstream row changes: the downstream refresh writes that row, not the view
    f.sql("UPDATE " + t + " SET v = v + 5 WHERE id = 500");
    f.sql("REFRESH MATERIALIZED VIEW " + u);
    Row r = f.sql("REFRESH MATERIALIZED VIEW " + d).get(0);
    assertEquals(1L, (long) r.getAs("rows_inserted"), r.toString());
    assertEquals(1L, (long) r.getAs("rows_deleted"), r.toString());

    f.sql("OPTIMIZE MATERIALIZED VIEW " + u);
    f.sql("UPDATE " + t + " SET v = v + 7 WHERE id IN (2, 10002)");
    f.sql("DELETE FROM " + t + " WHERE id = 4");
    f.sql("REFRESH MATERIALIZED VIEW " + u);
    f.sql("REFRESH MATERIALIZED VIEW " + d);
    assertEquals(f.rows(downSelect), f.rows("SELECT id, x FROM " + d));
    Row dup = f.sql("SELECT count(*), count(DISTINCT __source_row_id) FROM " + d).get(0);
    assertEquals(dup.getLong(0), dup.getLong(1), "an upstream row is in the view twice");
  }

  /**
   * A chunker view over a query view expands again only the parents the upstream refresh
   * changed (the upstream commit is an Overwrite that keeps its other fragments); a plain
   * INSERT OVERWRITE of a source (nothing kept) rebuilds the views over it.
   */
  @Test
  void aChunkerOverAViewExpandsOnlyWhatChangedAndAnOverwrittenSourceRebuilds() {
    String t = "lance." + ns + ".docs6";
    f.sql("CREATE TABLE " + t + " (id BIGINT, doc STRING)");
    f.sql("INSERT INTO " + t + " SELECT id, concat('some words of document ', id) FROM "
        + "range(0, 50, 1, 1)");
    String u = "lance." + ns + ".up6";
    f.sql("CREATE MATERIALIZED VIEW " + u + " AS SELECT id, doc FROM " + t);
    String c = "lance." + ns + ".chunks6";
    String chunker = "USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS "
        + "(input_columns = 'doc', chunk_size = '8') AS SELECT id, doc FROM ";
    f.sql("CREATE MATERIALIZED VIEW " + c + " " + chunker + u);
    long chunks = f.sql("SELECT count(*) FROM " + c).get(0).getLong(0);
    f.sql("UPDATE " + t + " SET doc = 'changed' WHERE id = 7");
    f.sql("REFRESH MATERIALIZED VIEW " + u);
    Row r = f.sql("REFRESH MATERIALIZED VIEW " + c).get(0);
    assertEquals(1L, (long) r.getAs("rows_inserted"), "one chunk for 'changed': " + r);
    assertTrue((long) r.getAs("rows_deleted") * 10 < chunks, r + " of " + chunks + " chunks");
    String fresh = c + "_fresh";
    f.sql("CREATE MATERIALIZED VIEW " + fresh + " " + chunker + u);
    String cols = "id, chunk, char_offset";
    assertEquals(f.rows("SELECT " + cols + " FROM " + fresh), f.rows("SELECT " + cols + " FROM "
        + c));

    String q = "lance." + ns + ".q6";
    f.sql("CREATE MATERIALIZED VIEW " + q + " AS SELECT id, upper(doc) AS d FROM " + t);
    f.sql("INSERT OVERWRITE " + t + " SELECT id, concat('new text ', id) FROM range(20, 30, 1, 1)");
    f.sql("REFRESH MATERIALIZED VIEW " + q);
    assertEquals(f.rows("SELECT id, upper(doc) FROM " + t), f.rows("SELECT id, d FROM " + q));
    Row dup = f.sql("SELECT count(*), count(DISTINCT __source_row_id) FROM " + q).get(0);
    assertEquals(dup.getLong(0), dup.getLong(1), "a source row is in the view twice");
  }
}
