package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.search.SearchException;
import io.lancerest.spark.mv.TestSpark;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code vector_search} and {@code search} on an S3 API store behind a token-protected namespace
 * that vends 4-second keys ({@link VendedS3}), with no {@code storage.*} keys in the catalog: the
 * search plans on the driver and runs in a task with the keys the namespace vended for the
 * statement, as the catalog's scans do; keys vended earlier have expired by then.
 */
@Tag("slow")
class SearchObjectStoreTest {
  static final String TOKEN = "search-catalog-token-7d2a";
  static VendedS3 env;
  static EngineFixture f;

  @BeforeAll
  static void start() {
    env = VendedS3.start("search", TOKEN, TOKEN, Duration.ofSeconds(4), TestSpark.MASTER,
        Map.of());
    f = env.f;
  }

  @AfterAll
  static void stop() {
    if (env != null) {
      env.close();
    }
  }

  @Test
  void searchesOfAnS3TableUseItsIndexesWithVendedKeysThatExpire() throws Exception {
    String t = "lance." + f.namespace("s3search") + ".docs";
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, text STRING) TBLPROPERTIES "
        + "('vec.arrow.fixed-size-list.size' = '2')");
    f.sql("INSERT INTO " + t + " SELECT id, array(CAST(sin(id) AS FLOAT), "
        + "CAST(cos(id * 0.3) AS FLOAT)), concat('word', id % 5) FROM range(0, 200, 1, 1)");
    f.sql("ALTER TABLE " + t + " CREATE INDEX vec_idx USING ivf_flat (vec) WITH "
        + "(num_partitions = 2)");
    f.sql("ALTER TABLE " + t + " CREATE INDEX text_idx USING fts (text) WITH (base_tokenizer = "
        + "'simple', language = 'English', max_token_length = 40, lower_case = true, stem = "
        + "false, remove_stop_words = false, ascii_folding = false, with_position = false)");
    Thread.sleep(5_000); // every key vended so far has expired: the search needs new ones

    // brute force: squared L2 to (0.5, -0.5) over every row
    List<double[]> all = new ArrayList<>();
    for (Row r : f.sql("SELECT id, vec FROM " + t)) {
      List<Float> v = r.getList(1);
      double a = v.get(0) - 0.5;
      double b = v.get(1) + 0.5;
      all.add(new double[] {r.getLong(0), a * a + b * b});
    }
    all.sort(java.util.Comparator.comparingDouble(x -> x[1]));
    List<Long> expected = new ArrayList<>();
    for (double[] x : all.subList(0, 6)) {
      expected.add((long) x[0]);
    }
    String q = "SELECT id FROM vector_search('" + t + "', 'vec', array(0.5, -0.5), 6, "
        + "nprobes => 2)";
    List<Long> got = new ArrayList<>();
    for (Row r : f.sql(q)) {
      got.add(r.getLong(0));
    }
    assertEquals(expected, got);
    String plan = f.sql("EXPLAIN " + q).get(0).getString(0);
    assertTrue(plan.contains("index vec_idx (IVF_FLAT, 2 partitions, nprobes 2)"), plan);

    Thread.sleep(5_000);
    // 'word3' is the text of ids with id % 5 = 3; the filter after the search keeps the even ones
    java.util.TreeSet<Long> matches = new java.util.TreeSet<>();
    java.util.TreeSet<Long> evenMatches = new java.util.TreeSet<>();
    for (long id = 0; id < 200; id++) {
      if (id % 5 == 3) {
        matches.add(id);
        if (id % 2 == 0) {
          evenMatches.add(id);
        }
      }
    }
    assertEquals(matches, ids("SELECT id FROM search('" + t + "', 'word3', 100)"));
    assertEquals(evenMatches, ids("SELECT id FROM search('" + t + "', 'word3', 100) WHERE "
        + "id % 2 = 0"));

    // the catalog's token reaches neither EXPLAIN nor an error
    String extended = f.sql("EXPLAIN EXTENDED " + q).get(0).getString(0);
    assertTrue(extended.contains("vector_search(" + t + ")"), extended);
    assertFalse(extended.contains(TOKEN), extended);
    String refused = assertThrows(SearchException.class, () -> f.sql("SELECT * FROM "
        + "vector_search('" + t + "', 'nope', array(0.5, -0.5), 6)")).getMessage();
    assertEquals("Search on " + t + ": no column 'nope'; its columns are id, vec, text.",
        refused);
  }

  private static java.util.TreeSet<Long> ids(String sql) {
    java.util.TreeSet<Long> out = new java.util.TreeSet<>();
    for (Row r : f.sql(sql)) {
      out.add(r.getLong(0));
    }
    return out;
  }
}
