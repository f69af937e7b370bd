package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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
    for (String k : List.of("enabled", "maxFragments", "retention")) {
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
    f.spark.conf().set(CONF + "enabled", "true");
    f.spark.conf().set(CONF + "maxFragments", "6");
    f.spark.conf().set(CONF + "retention", "0s");
    for (int round = 1; round <= 20; round++) {
      insertAndRefresh(t, v, round);
      assertTrue(fragments("v1") <= 7, "round " + round + ": " + fragments("v1")
          + " fragments");
    }
    assertEquals(f.rows(select), f.rows("SELECT id, v2 FROM " + v));
    assertTrue(versions("v1") <= 2, versions("v1") + " versions kept with retention 0s");
    List<Row> jobs = f.sql("SHOW JOBS FOR " + v);
    assertTrue(jobs.stream().anyMatch(r -> String.valueOf((Object) r.getAs("message"))
        .startsWith("maintenance: compacted ")), jobs.toString());
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
    assertTrue(String.valueOf((Object) job.getAs("message")).startsWith("maintenance failed (the refresh "
        + "stands): IllegalArgumentException: The spark.lancerest.mv.maintenance.* confs are not"
        + " a valid maintenance policy"), job.toString());
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
}
