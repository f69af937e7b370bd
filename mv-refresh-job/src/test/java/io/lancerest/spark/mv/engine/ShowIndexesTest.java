package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.index.OptimizeOptions;

/**
 * {@code SHOW INDEXES} and {@code DESCRIBE MATERIALIZED VIEW}'s Indexes section on tables and
 * views with a vector (ivf_flat), a btree, a bitmap and a full-text index: one row per index, how
 * many rows it covers and how many it does not yet, its segments; and {@code CREATE INDEX …
 * USING bitmap}, which lance-spark 0.4.0 does not build.
 */
class ShowIndexesTest {
  static EngineFixture f;
  static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("shix");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** {@code lance.<ns>.<name> (id, vec 2-d vector, text, cat)} with ids {@code [0, to)}. */
  private static String table(String name, int to) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, text STRING, cat STRING) "
        + "TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '2')");
    insert(t, 0, to);
    return t;
  }

  private static void insert(String t, int from, int to) {
    f.sql("INSERT INTO " + t + " SELECT id, array(CAST((id % 2) * 100 + id * 0.01 AS FLOAT), "
        + "CAST((id % 2) * 100 AS FLOAT)), concat('word', id % 7, ' doc', id), concat('c', id % 3)"
        + " FROM range(" + from + ", " + to + ", 1, 1)");
  }

  /** The four kinds of index, in this order: ivf_flat, btree, bitmap, fts. */
  private static void indexAll(String t) {
    String alter = "ALTER TABLE " + t + " CREATE INDEX ";
    f.sql(alter + "vec_idx USING ivf_flat (vec) WITH (num_partitions = 2)");
    f.sql(alter + "id_idx USING btree (id)");
    f.sql(alter + "cat_idx USING bitmap (cat)");
    f.sql(alter + "text_idx USING fts (text) WITH (base_tokenizer = 'simple', language = "
        + "'English', max_token_length = 40, lower_case = true, stem = false, remove_stop_words "
        + "= false, ascii_folding = false, with_position = false)");
  }

  /** The rows of {@code sql} in {@code s} as "a|b|c" strings, in the order they came. */
  private static List<String> shown(SparkSession s, String sql) {
    List<String> out = new ArrayList<>();
    for (Row r : s.sql(sql).collectAsList()) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < r.length(); i++) {
        sb.append(i > 0 ? "|" : "").append(r.isNullAt(i) ? "null" : r.get(i).toString());
      }
      out.add(sb.toString());
    }
    SparkSession.setActiveSession(f.spark);
    return out;
  }

  /** The four indexes' SHOW INDEXES rows: each covers {@code counts} (fragments and rows). */
  private static List<String> four(String counts, int vectorSegments) {
    return four("vector", counts, vectorSegments);
  }

  /**
   * {@link #four(String, int)} with the vector index's type as shown: {@code vector} on a table
   * (the manifest does not say which IVF method), the method on a view (its recorded recipe).
   * lance-spark 0.4.0 writes its btree and fts indexes with no type nor details in the manifest:
   * their statistics name them.
   */
  private static List<String> four(String vectorType, String counts, int vectorSegments) {
    return List.of("vec_idx|WrappedArray(vec)|" + vectorType + "|" + counts + "|"
        + vectorSegments,
        "id_idx|WrappedArray(id)|btree|" + counts + "|1",
        "cat_idx|WrappedArray(cat)|bitmap|" + counts + "|1",
        "text_idx|WrappedArray(text)|inverted|" + counts + "|1");
  }

  private static String location(String name) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, name), "table")
        .location();
  }

  @Test
  void showIndexesCountsTheRowsEachIndexCoversAndTheOnesItDoesNotYet() {
    String t = table("t", 40);
    indexAll(t);
    assertEquals(List.of("name", "fields", "index_type", "num_indexed_fragments",
        "num_indexed_rows", "num_unindexed_fragments", "num_unindexed_rows", "num_segments"),
        List.of(f.spark.sql("SHOW INDEXES FROM " + t).schema().fieldNames()));
    assertEquals(four("1|40|0|0", 1), shown(f.spark, "SHOW INDEXES FROM " + t));

    insert(t, 40, 46); // a second fragment, in no index
    assertEquals(four("1|40|1|6", 1), shown(f.spark, "SHOW INDEXES FROM " + t));

    // The new fragment added to the vector index as a delta segment (what a refresh that keeps
    // the index does): one row for the index still, with its two segments.
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location("t"), a)) {
      ds.optimizeIndices(OptimizeOptions.builder().indexNames(List.of("vec_idx"))
          .numIndicesToMerge(0).build());
    }
    List<String> now = new ArrayList<>(four("1|40|1|6", 1));
    now.set(0, "vec_idx|WrappedArray(vec)|vector|2|46|0|0|2");
    assertEquals(now, shown(f.spark, "SHOW INDEXES FROM " + t));
    // examples/conf/spark-defaults.conf lists our extension alone; the other order too
    assertEquals(now, shown(f.sessionWith(new LanceRestSparkExtensions()),
        "SHOW INDEX IN " + t));
    assertEquals(now, shown(f.sessionWith(
        new org.lance.spark.extensions.LanceSparkSessionExtensions(),
        new LanceRestSparkExtensions()), "show indexes from " + t));
  }

  @Test
  void aViewsIndexesAreShownAndDescribed() {
    String src = table("vsrc", 40);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = "
        + "'2') AS SELECT id, vec, text, cat FROM " + src + " WHERE id % 2 = 0");
    indexAll(v);
    assertEquals(four("ivf_flat", "1|20|0|0", 1), shown(f.spark, "SHOW INDEXES FROM " + v));

    List<String> described = shown(f.spark, "DESCRIBE MATERIALIZED VIEW " + v);
    assertEquals(List.of("Indexes|4",
        "Index vec_idx|ivf_flat on vec: 20 rows indexed, 0 not indexed, 1 segment",
        "Index id_idx|btree on id: 20 rows indexed, 0 not indexed, 1 segment",
        "Index cat_idx|bitmap on cat: 20 rows indexed, 0 not indexed, 1 segment",
        "Index text_idx|inverted on text: 20 rows indexed, 0 not indexed, 1 segment"),
        described.subList(described.size() - 5, described.size()));
  }

  @Test
  void aViewWithoutIndexesSaysSoInOneLine() {
    String src = table("plain_src", 10);
    String v = "lance." + ns + ".plain";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, cat FROM " + src);
    List<String> described = shown(f.spark, "DESCRIBE MATERIALIZED VIEW " + v);
    assertEquals("Indexes|none", described.get(described.size() - 1));
    assertEquals(1, described.stream().filter(r -> r.startsWith("Index")).count(), described
        .toString());
    assertEquals(List.of(), shown(f.spark, "SHOW INDEXES FROM " + v));
  }

  @Test
  void aBitmapIndexIsBuiltAndBadInputIsNamed() {
    String t = table("bm", 30);
    SparkSession.setActiveSession(f.spark);
    assertEquals("[[1,cat_idx]]", f.spark.sql("ALTER TABLE " + t + " CREATE INDEX cat_idx USING "
        + "BITMAP (cat)").collectAsList().toString());
    assertEquals(List.of("cat_idx|WrappedArray(cat)|bitmap|1|30|0|0|1"),
        shown(f.spark, "SHOW INDEXES FROM " + t));
    assertEquals(List.of("3", "6"), f.rows("SELECT id FROM " + t + " WHERE cat = 'c0' AND id "
        + "BETWEEN 1 AND 8"));

    InvalidOptionException options = assertThrows(InvalidOptionException.class, () -> f.sql(
        "ALTER TABLE " + t + " CREATE INDEX c2 USING bitmap (cat) WITH (num_partitions = 2)"));
    assertEquals("CREATE INDEX c2 USING bitmap (cat) on " + t + ": bitmap has no options; "
        + "remove WITH (num_partitions)", options.getMessage());
    MaterializedViewException column = assertThrows(MaterializedViewException.class,
        () -> f.sql("ALTER TABLE " + t + " CREATE INDEX c3 USING bitmap (colour)"));
    assertEquals("Table " + t + " has no column 'colour' to index; its columns are [id, vec, "
        + "text, cat]", column.getMessage());
    MaterializedViewException vector = assertThrows(MaterializedViewException.class,
        () -> f.sql("ALTER TABLE " + t + " CREATE INDEX c4 USING bitmap (vec)"));
    assertTrue(vector.getMessage().startsWith("Cannot build the bitmap index 'c4' on column 'vec'"
        + " of table " + t + ": "), vector.getMessage());
    assertTrue(vector.getMessage().endsWith(". Index a column of a type lance-core can build it "
        + "on, then run CREATE INDEX again"), vector.getMessage());
    // as Spark's analyzer answered it when SHOW INDEXES was lance-spark's
    NoSuchTableException missing = assertThrows(NoSuchTableException.class,
        () -> f.sql("SHOW INDEXES FROM lance." + ns + ".nothing"));
    assertEquals("TABLE_OR_VIEW_NOT_FOUND", missing.getErrorClass());
    assertTrue(missing.getMessage().startsWith("[TABLE_OR_VIEW_NOT_FOUND] The table or view "
        + "`lance`.`" + ns + "`.`nothing` cannot be found."), missing.getMessage());
  }
}
