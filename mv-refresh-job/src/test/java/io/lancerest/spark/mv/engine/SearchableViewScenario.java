package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import org.apache.spark.sql.Row;

/**
 * What a user does to serve search from a view, run on any {@link EngineFixture} (a local
 * folder, S3, a cluster): a chunker view of documents that carries each document's vector, a
 * full-text index on its chunks and a vector index on the vector, ten refreshes while the
 * documents are inserted, edited and deleted, then searches from SQL through both indexes,
 * compared with a view created from scratch over the same documents and indexed afresh.
 */
final class SearchableViewScenario {
  static final int ROUNDS = 10;
  private static final String FTS = "base_tokenizer = 'simple', language = 'English', "
      + "max_token_length = 40, lower_case = true, stem = false, remove_stop_words = false, "
      + "ascii_folding = false, with_position = false";
  private static final String[] KEYS = {"array(0.9, 0.1, 0.0, 0.2)", "array(-0.5, 0.5, 0.3, 0.0)",
      "array(0.0, 0.0, 1.0, -1.0)"};
  private static final String[] WORDS = {"lance", "spark", "word3", "edited"};

  private SearchableViewScenario() {}

  /** Runs the scenario in a new namespace of {@code f}; assertions fail with what differed. */
  static void run(EngineFixture f) {
    String ns = f.namespace("searchable");
    String docs = "lance." + ns + ".docs";
    String chunks = "lance." + ns + ".chunks";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, body STRING, vec ARRAY<FLOAT>) "
        + "TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '4')");
    insert(f, docs, 0, 60);
    f.sql(create(chunks, docs));
    index(f, chunks);
    for (int round = 1; round <= ROUNDS; round++) {
      insert(f, docs, 60 + round * 10, 60 + round * 10 + 6);
      // scattered edits and deletes over the whole table, not a contiguous block
      f.sql("UPDATE " + docs + " SET body = concat(body, ' edited r" + round + "'), vec = "
          + "array(CAST(cos(id + " + round + ") AS FLOAT), vec[1], vec[2], vec[3]) "
          + "WHERE id % 11 = " + (round % 11));
      f.sql("DELETE FROM " + docs + " WHERE id % 17 = " + (round % 17) + " AND id < "
          + (20 + round * 7));
      Row r = f.sql("REFRESH MATERIALIZED VIEW " + chunks).get(0);
      assertEquals("DONE", r.getString(1), "refresh " + round + ": " + r);
    }
    List<String> shown = f.rows("SHOW INDEXES FROM " + chunks);
    assertEquals(2, shown.size(), "both indexes are still listed after " + ROUNDS
        + " refreshes: " + shown);
    for (String row : shown) {
      // name|fields|type|indexed fragments|indexed rows|unindexed fragments|unindexed rows|...
      String[] c = row.split("\\|");
      assertEquals("0", c[6], "every row of the view is indexed by " + c[0] + ": " + row);
    }

    String fresh = "lance." + ns + ".chunks_fresh";
    f.sql(create(fresh, docs));
    index(f, fresh);
    assertEquals(sorted(f.rows("SELECT id, chunk FROM " + fresh)),
        sorted(f.rows("SELECT id, chunk FROM " + chunks)), "the refreshed view equals a view "
        + "created from scratch");
    for (String key : KEYS) {
      String search = "vector_search('%s', 'vec', " + key + ", 12, nprobes => 2)";
      List<String> explain = f.rows("EXPLAIN SELECT * FROM " + String.format(search, chunks));
      assertTrue(String.join("\n", explain).contains(": index vidx"), "the search of the "
          + "refreshed view uses its vector index: " + explain);
      assertEquals(nearest(f, String.format(search, fresh)),
          nearest(f, String.format(search, chunks)), "nearest chunks to " + key);
    }
    for (String word : WORDS) {
      String search = "search('%s', '" + word + "', 1000)";
      List<String> expected = sorted(f.rows("SELECT id, chunk FROM "
          + String.format(search, fresh)));
      assertTrue(!expected.isEmpty(), "the fresh view finds '" + word + "'");
      assertEquals(expected, sorted(f.rows("SELECT id, chunk FROM "
          + String.format(search, chunks))), "chunks matching '" + word + "'");
      List<String> explain = f.rows("EXPLAIN SELECT * FROM " + String.format(search, chunks));
      assertTrue(String.join("\n", explain).contains(": index chunk_fts"), "the full-text search of "
          + "the refreshed view uses its index: " + explain);
    }
  }

  private static String create(String view, String docs) {
    return "CREATE MATERIALIZED VIEW " + view + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'body', "
        + "separator = ' ') AS SELECT id, body, vec FROM " + docs;
  }

  private static void index(EngineFixture f, String view) {
    f.sql("ALTER TABLE " + view + " CREATE INDEX chunk_fts USING fts (chunk) WITH (" + FTS + ")");
    f.sql("ALTER TABLE " + view + " CREATE INDEX vidx USING ivf_flat (vec) WITH "
        + "(num_partitions = 2)");
  }

  private static void insert(EngineFixture f, String docs, int from, int to) {
    f.sql("INSERT INTO " + docs + " SELECT id, concat('doc', id, ' lance word', id % 5, "
        + "CASE WHEN id % 3 = 0 THEN ' spark' ELSE '' END), array(CAST(sin(id) AS FLOAT), "
        + "CAST(cos(id * 0.7) AS FLOAT), CAST(sin(id * 0.3) AS FLOAT), CAST(cos(id) AS FLOAT)) "
        + "FROM range(" + from + ", " + to + ", 1, 1)");
  }

  /**
   * The distances of the k nearest (to 4 decimals), and the chunks strictly nearer than the
   * k-th distance: chunks of one document share its vector, so rows tied at the k-th distance
   * may differ between two correct answers.
   */
  private static List<String> nearest(EngineFixture f, String search) {
    List<Row> rows = f.sql("SELECT id, chunk, _distance FROM " + search
        + " ORDER BY _distance, id, chunk");
    List<String> out = new ArrayList<>();
    if (rows.isEmpty()) {
      return out;
    }
    float last = rows.get(rows.size() - 1).getFloat(2);
    TreeSet<String> nearer = new TreeSet<>();
    for (Row r : rows) {
      out.add(String.format(Locale.ROOT, "%.4f", r.getFloat(2)));
      if (r.getFloat(2) < last - 1e-6) {
        nearer.add(r.getLong(0) + "|" + r.getString(1));
      }
    }
    out.add("nearer: " + nearer);
    return out;
  }

  private static List<String> sorted(List<String> rows) {
    return rows.stream().sorted().toList();
  }
}
