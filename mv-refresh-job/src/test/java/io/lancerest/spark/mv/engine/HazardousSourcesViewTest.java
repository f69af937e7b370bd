package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.spark.connector.read.FragmentHazard;
import io.lancerest.spark.connector.read.TableFragments;
import io.lancerest.testing.LanceStates;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;

/**
 * All three view kinds refreshed over a source in each fragment state lance-core 4.0.0 scans in
 * quadratic time ({@link FragmentHazard}), and over view tables a compaction rewrote: every
 * refresh finishes (each Spark job is under the session's bounded wait, {@code JobWatchdog}),
 * and each view then equals the same view built from scratch.
 *
 * <p>The source has one fragment of {@value #ROWS} rows with stable row ids, big enough for the
 * unguarded scans to take minutes (LanceCoreScanDefectTest).
 */
@Tag("slow")
class HazardousSourcesViewTest {
  static final int ROWS = 200_000;
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static String row(String id) {
    return id + " AS id, CAST(" + id + " % 7 AS STRING) AS category, concat('w', CAST(" + id
        + " AS STRING), ' x', CAST(" + id + " % 100 AS STRING)) AS body, CAST(" + id
        + " % 100 AS INT) AS score";
  }

  private static final String QUERY = "SELECT id, upper(body) AS ub, score * 2 AS s2 FROM %s "
      + "WHERE score >= 50";
  private static final String CHUNKER = "USING CHUNKER 'io.lancerest.spark.mv.chunker."
      + "TextSplitter' OPTIONS (input_columns = 'body', chunk_size = 4, overlap = 0) AS SELECT "
      + "id, body FROM %s WHERE score < 5";
  private static final String UDTF = "USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' "
      + "PARTITION BY category OPTIONS (k = '3', order_by = 'score') AS SELECT category, id, "
      + "score FROM %s";

  @Test
  void everyKindRefreshesExactlyOverDeletionsAndRewrittenFragments() {
    String ns = f.namespace("hzv");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " TBLPROPERTIES ('enable_stable_row_ids' = 'true') AS SELECT "
        + "/*+ COALESCE(1) */ " + row("id") + " FROM range(" + ROWS + ")");
    String q = "lance." + ns + ".q";
    String c = "lance." + ns + ".c";
    String u = "lance." + ns + ".u";
    f.sql("CREATE MATERIALIZED VIEW " + q + " AS " + String.format(QUERY, src));
    f.sql("CREATE MATERIALIZED VIEW " + c + " " + String.format(CHUNKER, src));
    f.sql("CREATE MATERIALIZED VIEW " + u + " " + String.format(UDTF, src));

    // 1. deletions in the big fragment: an UPDATE (delete + insert) and a DELETE of rows in the
    //    query view (score 57, 58) and in the chunker view (score 3, 4), an INSERT
    f.sql("UPDATE " + src + " SET body = concat(body, ' u') WHERE id % 1000 IN (57, 3)");
    f.sql("DELETE FROM " + src + " WHERE id % 1000 IN (58, 4)");
    f.sql("INSERT INTO " + src + " SELECT " + row("id") + " FROM range(" + ROWS + ", "
        + (ROWS + 2000) + ")");
    assertTrue(hazards(ns, "src").any(FragmentHazard.DELETIONS));
    refreshAndCompare(ns, src, "after deletions");

    // 2. the source compacted by another writer: row-id sequences with holes
    LanceStates.compactDroppingDeletions(location(ns, "src"));
    assertTrue(hazards(ns, "src").any(FragmentHazard.REWRITTEN_ROW_IDS));
    f.sql("UPDATE " + src + " SET score = 1 WHERE id % 1000 = 59"); // from one view to the other
    f.sql("INSERT INTO " + src + " SELECT " + row("id") + " FROM range(" + (ROWS + 2000) + ", "
        + (ROWS + 3000) + ")");
    refreshAndCompare(ns, src, "after the source was compacted");

    // 3. the view tables compacted too (the refreshes' deletions, then holes in their row ids)
    for (String v : List.of("q", "c")) {
      LanceStates.compactDroppingDeletions(location(ns, v));
      assertTrue(hazards(ns, v).any(FragmentHazard.REWRITTEN_ROW_IDS), v + ": "
          + hazards(ns, v));
    }
    f.sql("UPDATE " + src + " SET body = concat(body, ' v') WHERE id % 1000 IN (61, 2)");
    f.sql("DELETE FROM " + src + " WHERE id % 1000 IN (62, 1)");
    refreshAndCompare(ns, src, "after the views were compacted");
    // filtered reads of the rewritten view tables
    assertEquals(f.rows(String.format(QUERY, src) + " AND id % 10 = 3"),
        f.rows("SELECT id, ub, s2 FROM " + q + " WHERE id % 10 = 3"));
  }

  private static void refreshAndCompare(String ns, String src, String when) {
    for (String v : List.of("q", "c", "u")) {
      List<String> r = f.rows("REFRESH MATERIALIZED VIEW lance." + ns + "." + v);
      assertTrue(r.get(0).contains("DONE"), v + " " + when + ": " + r);
    }
    assertEquals(0, f.sql("SELECT * FROM ((SELECT id, ub, s2 FROM lance." + ns + ".q EXCEPT ALL "
        + String.format(QUERY, src) + ") UNION ALL (" + String.format(QUERY, src) + " EXCEPT ALL "
        + "SELECT id, ub, s2 FROM lance." + ns + ".q))").size(), "query view " + when);
    for (String kind : List.of("c", "u")) {
      String fresh = "lance." + ns + "." + kind + "_fresh";
      f.sql("DROP MATERIALIZED VIEW IF EXISTS " + fresh);
      f.sql("CREATE MATERIALIZED VIEW " + fresh + " "
          + String.format(kind.equals("c") ? CHUNKER : UDTF, src));
      String cols = kind.equals("c") ? "id, __child_index, chunk" : "category, rank, id, score";
      assertEquals(f.rows("SELECT " + cols + " FROM " + fresh),
          f.rows("SELECT " + cols + " FROM lance." + ns + "." + kind),
          (kind.equals("c") ? "chunker" : "udtf") + " view " + when);
    }
  }

  private static String location(String ns, String table) {
    try (LanceRestClient c = LanceRestClient.create(Map.of("uri", f.uri))) {
      return c.describeTable(new DescribeTableRequest().id(List.of(ns, table))).getLocation();
    }
  }

  private static TableFragments hazards(String ns, String table) {
    try (RootAllocator a = new RootAllocator(); Dataset ds = Dataset.open(location(ns, table),
        a)) {
      return TableFragments.of(ds);
    }
  }
}
