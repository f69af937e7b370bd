package io.lancerest.spark.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.search.SearchException;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code vector_search} and {@code search} on a real dir server and real Spark: the rows equal a
 * brute-force scan (an ivf_flat index probed in every partition is exact), EXPLAIN says what the
 * search uses, and each bad input gets its own message.
 */
class SearchFunctionsTest {
  private static final int ROWS = 300;
  private static final String KEY = "array(0.1, 0.2, -0.3, 0.4)";
  private static final float[] KEY_VALUES = {0.1f, 0.2f, -0.3f, 0.4f};
  private static final String FTS_OPTIONS = "base_tokenizer = 'simple', language = 'English', "
      + "max_token_length = 40, lower_case = true, stem = false, remove_stop_words = false, "
      + "ascii_folding = false, with_position = false";
  static EngineFixture f;
  static String ns;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("search");
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** {@code (id, vec 4-d vector, arr ARRAY<FLOAT>, text)}: vectors spread so no two distances tie. */
  private static String table(String name) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, arr ARRAY<FLOAT>, text STRING) "
        + "TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '4')");
    f.sql("INSERT INTO " + t + " SELECT id, array(CAST(sin(id * 1.3) AS FLOAT), "
        + "CAST(cos(id * 0.7) AS FLOAT), CAST(sin(id * 0.11) AS FLOAT), "
        + "CAST(cos(id * 2.9) AS FLOAT)), array(CAST(id AS FLOAT)), "
        + "concat('word', id % 7, ' doc', id) FROM range(0, " + ROWS + ", 1, 1)");
    return t;
  }

  /** The k ids nearest to the key by squared L2 (lance's l2), with their distances. */
  private static List<String> bruteForce(String t, String where, int k) {
    List<double[]> all = new ArrayList<>();
    for (Row r : f.sql("SELECT id, vec FROM " + t + where)) {
      List<Float> v = r.getList(1);
      double d = 0;
      for (int i = 0; i < KEY_VALUES.length; i++) {
        double x = v.get(i) - KEY_VALUES[i];
        d += x * x;
      }
      all.add(new double[] {r.getLong(0), d});
    }
    all.sort(Comparator.comparingDouble(a -> a[1]));
    List<String> out = new ArrayList<>();
    for (double[] a : all.subList(0, k)) {
      out.add((long) a[0] + "@" + String.format("%.4f", a[1]));
    }
    return out;
  }

  /** The rows of a vector search, in the order returned, as "id@distance". */
  private static List<String> searched(String sql) {
    List<String> out = new ArrayList<>();
    float last = -1;
    for (Row r : f.sql(sql)) {
      float d = r.getFloat(1);
      assertTrue(d >= last, "_distance ascending: " + out + " then " + d);
      last = d;
      out.add(r.getLong(0) + "@" + String.format("%.4f", d));
    }
    return out;
  }

  private static String explain(String query) {
    return f.sql("EXPLAIN " + query).get(0).getString(0);
  }

  @Test
  void vectorSearchEqualsBruteForceWithAndWithoutAnIndex() {
    String t = table("items");
    List<String> expected = bruteForce(t, "", 7);
    String q = "SELECT id, _distance FROM vector_search('" + t + "', 'vec', " + KEY + ", 7)";
    assertEquals(expected, searched(q));
    assertTrue(explain(q).contains("vector search of column vec for k=7 (l2): no index on "
        + "column vec: exact scan of 300 rows"), explain(q));
    // lance-spark's positional form (the only vector column) and named arguments
    assertEquals(expected, searched("SELECT id, _distance FROM vector_search('" + t + "', "
        + KEY + ", 7)"));
    assertEquals(expected, searched("SELECT id, _distance FROM vector_search(table => '" + t
        + "', query_vector => " + KEY + ", vector_column => 'vec', num_results => 7)"));

    f.sql("ALTER TABLE " + t + " CREATE INDEX vec_idx USING ivf_flat (vec) WITH "
        + "(num_partitions = 4)");
    String indexed = "SELECT id, _distance FROM vector_search('" + t + "', 'vec', " + KEY
        + ", 7, nprobes => 4)";
    assertEquals(expected, searched(indexed));
    assertTrue(explain(indexed).contains("vector search of column vec for k=7 (l2): index "
        + "vec_idx (IVF_FLAT, 4 partitions, nprobes 4)"), explain(indexed));
    assertTrue(explain(indexed).contains("BatchScan vector_search(" + t + ")"), explain(indexed));

    // k is respected, also when Spark reads no column (count) or filters the k rows after
    assertEquals(7L, f.sql("SELECT count(*) FROM vector_search('" + t + "', 'vec', " + KEY
        + ", 7)").get(0).getLong(0));
    assertEquals(expected.stream().filter(r -> Long.parseLong(r.split("@")[0]) % 2 == 0)
        .toList(), searched(indexed + " WHERE id % 2 = 0"));
    // every column of the table, the vector as array<float>, then _distance
    org.apache.spark.sql.Dataset<Row> all = f.spark.sql("SELECT * FROM vector_search('" + t
        + "', 'vec', " + KEY + ", 3)");
    assertEquals("struct<id:bigint,vec:array<float>,arr:array<float>,text:string,"
        + "_distance:float>", all.schema().simpleString());
    Row first = all.collectAsList().get(0);
    assertEquals(expected.get(0).split("@")[0], String.valueOf(first.getLong(0)));
    assertEquals(4, first.getList(1).size());
  }

  @Test
  void vectorSearchOfAMaterializedViewEqualsBruteForce() {
    String t = table("src");
    String v = "lance." + ns + ".even";
    f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES ('vec.arrow.fixed-size-list.size' "
        + "= '4') AS SELECT id, vec, text FROM " + t + " WHERE id % 2 = 0");
    List<String> expected = bruteForce(v, "", 5);
    assertEquals(expected, bruteForce(t, " WHERE id % 2 = 0", 5));
    String q = "SELECT id, _distance FROM vector_search('" + v + "', 'vec', " + KEY + ", 5)";
    assertEquals(expected, searched(q));
    f.sql("ALTER TABLE " + v + " CREATE INDEX even_idx USING ivf_flat (vec) WITH "
        + "(num_partitions = 2)");
    String indexed = "SELECT id, _distance FROM vector_search('" + v + "', 'vec', " + KEY
        + ", 5, nprobes => 2)";
    assertEquals(expected, searched(indexed));
    assertTrue(explain(indexed).contains("index even_idx (IVF_FLAT, 2 partitions, nprobes 2)"),
        explain(indexed));
    // the view's layout columns stay hidden
    assertEquals("struct<id:bigint,vec:array<float>,text:string,_distance:float>",
        f.spark.sql(q.replace("id, _distance", "*")).schema().simpleString());
  }

  @Test
  void fullTextSearchReturnsTheRowsATermMatchGivesWithScores() {
    String t = table("docs");
    f.sql("ALTER TABLE " + t + " CREATE INDEX text_idx USING fts (text) WITH (" + FTS_OPTIONS
        + ")");
    TreeSet<Long> expected = new TreeSet<>();
    for (Row r : f.sql("SELECT id FROM " + t + " WHERE text LIKE 'word3 %'")) {
      expected.add(r.getLong(0));
    }
    assertEquals(43, expected.size());
    String q = "SELECT id, _score FROM search('" + t + "', 'word3', 100)";
    TreeSet<Long> got = new TreeSet<>();
    float last = Float.MAX_VALUE;
    for (Row r : f.sql(q)) {
      assertTrue(r.getFloat(1) <= last && r.getFloat(1) > 0, "_score descending, positive");
      last = r.getFloat(1);
      got.add(r.getLong(0));
    }
    assertEquals(expected, got);
    assertTrue(explain(q).contains("full-text search of column text for k=100: index text_idx "
        + "(Inverted)"), explain(q));
    // k is respected; the column by name
    assertEquals(5, f.sql("SELECT * FROM search('" + t + "', 'word3', 5, search_columns => "
        + "array('text'))").size());
    assertEquals("struct<id:bigint,vec:array<float>,arr:array<float>,text:string,_score:float>",
        f.spark.sql(q.replace("id, _score", "*")).schema().simpleString());
  }

  @Test
  void fullTextSearchOfAChunkerViewReturnsTheMatchingChunks() {
    String src = "lance." + ns + ".articles";
    f.sql("CREATE TABLE " + src + " (id BIGINT, body STRING)");
    f.sql("INSERT INTO " + src + " SELECT id, concat('alpha', id % 3, '. beta', id % 4, "
        + "'. gamma') FROM range(0, 40, 1, 1)");
    String v = "lance." + ns + ".passages";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'body', "
        + "separator = '. ') AS SELECT id, body FROM " + src);
    f.sql("ALTER TABLE " + v + " CREATE INDEX chunk_fts USING fts (chunk) WITH ("
        + FTS_OPTIONS + ")");
    List<String> expected = f.rows("SELECT id, chunk FROM " + v + " WHERE chunk = 'beta1'");
    assertEquals(10, expected.size());
    assertEquals(expected, f.rows("SELECT id, chunk FROM search('" + v + "', 'beta1', 100)"));
    assertEquals("struct<id:bigint,chunk:string,char_offset:int,_score:float>",
        f.spark.sql("SELECT * FROM search('" + v + "', 'beta1', 3)").schema().simpleString());
  }

  @Test
  void fullTextSearchOfTwoColumnsMatchesEither() {
    String t = "lance." + ns + ".pages";
    f.sql("CREATE TABLE " + t + " (id BIGINT, title STRING, body STRING)");
    f.sql("INSERT INTO " + t + " SELECT id, concat('title', id % 5), concat('body', id % 3) "
        + "FROM range(0, 60, 1, 1)");
    f.sql("ALTER TABLE " + t + " CREATE INDEX title_fts USING fts (title) WITH (" + FTS_OPTIONS
        + ")");
    f.sql("ALTER TABLE " + t + " CREATE INDEX body_fts USING fts (body) WITH (" + FTS_OPTIONS
        + ")");
    // one word of each column: rows whose title is title1 or whose body is body2
    List<String> expected = f.rows("SELECT id FROM " + t + " WHERE title = 'title1' OR "
        + "body = 'body2'");
    String q = "SELECT id FROM search('" + t + "', 'title1 body2', 100, search_columns => "
        + "array('title', 'body'))";
    assertEquals(expected, f.rows(q));
    assertTrue(explain(q).contains("full-text search of columns title, body for k=100: index "
        + "title_fts (Inverted); index body_fts (Inverted)"), explain(q));
    assertEquals("search on " + t + ": name the column to search, one of body, title: search('"
        + t + "', 'words', k, search_columns => array('body')).",
        refused("SELECT * FROM search('" + t + "', 'title1', 3)"));
  }

  @Test
  void aFieldInsideAStructIsReadByItsName() {
    String t = "lance." + ns + ".nested";
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, meta STRUCT<a: INT, b: STRING>, "
        + "names STRUCT<a: STRING, b: STRING>) TBLPROPERTIES ('vec.arrow.fixed-size-list.size' "
        + "= '4')");
    f.sql("INSERT INTO " + t + " SELECT id, array(CAST(id AS FLOAT), 0.0F, 0.0F, 0.0F), "
        + "named_struct('a', CAST(id AS INT), 'b', concat('b', id)), "
        + "named_struct('a', concat('a', id), 'b', concat('b', id)) FROM range(0, 20, 1, 1)");
    String search = "vector_search('" + t + "', 'vec', array(3.2, 0.0, 0.0, 0.0), 2)";
    List<String> rows = new ArrayList<>();
    for (Row r : f.sql("SELECT id, meta.b, names.b, names.a FROM " + search + " ORDER BY id")) {
      rows.add(r.getLong(0) + ":" + r.getString(1) + ":" + r.getString(2) + ":"
          + r.getString(3));
    }
    assertEquals(List.of("3:b3:b3:a3", "4:b4:b4:a4"), rows);
    assertEquals(List.of("b3", "b4"), f.sql("SELECT meta.b FROM " + search).stream()
        .map(r -> r.getString(0)).toList());
  }

  @Test
  void badInputIsRefusedNamingTheTableTheColumnAndWhatToDo() {
    String t = table("bad");
    String call = "SELECT * FROM vector_search('" + t + "', ";
    assertEquals("Search on " + t + ": no column 'nope'; its columns are id, vec, arr, text.",
        refused(call + "'nope', " + KEY + ", 3)"));
    assertEquals("vector_search on " + t + ": column 'id' is BIGINT, not a vector (a fixed-size "
        + "list of floats). Search a vector column.", refused(call + "'id', " + KEY + ", 3)"));
    assertEquals("vector_search on " + t + ": column 'arr' is ARRAY<FLOAT> without a fixed "
        + "size, not a vector. Declare it as one when the table is created: TBLPROPERTIES "
        + "('arr.arrow.fixed-size-list.size' = '<dimension>') (docs/search.md).",
        refused(call + "'arr', " + KEY + ", 3)"));
    assertEquals("vector_search on " + t + ": the query vector has 3 values, but column 'vec' "
        + "holds vectors of 4. Pass a query vector of 4 values.",
        refused(call + "'vec', array(1, 2, 3), 3)"));
    assertEquals("Search on " + t + ": k (the number of rows to return) must be at least 1, "
        + "got 0.", refused(call + "'vec', " + KEY + ", 0)"));
    assertEquals("vector_search: argument 'k' is 10000000000, out of range; pass a value of at "
        + "most 2147483647.", refused(call + "'vec', " + KEY + ", 10000000000)"));
    assertEquals("vector_search: unknown argument 'nprobe'; the arguments are table, "
        + "vector_column, query_vector, k, nprobes, refine_factor, distance_type.",
        refused(call + "'vec', " + KEY + ", 3, nprobe => 2)"));
    assertEquals("vector_search: a positional argument follows a named one; name every "
        + "argument after the first named one.", refused(call + "vector_column => 'vec', "
        + KEY + ", 3)"));
    assertEquals("vector_search: argument 'k' must be a constant, not rand().",
        refused(call + "'vec', " + KEY + ", k => rand())"));
    assertEquals("vector_search: argument 'query_vector' is missing; e.g. vector_search("
        + "'lance.ns.items', 'vec', array(0.1, 0.2), 10).",
        refused(call + "vector_column => 'vec')"));
    assertEquals("search on " + t + ": the table has no full-text index, and lance-core "
        + "searches text only through one. Create it: ALTER TABLE " + t + " CREATE INDEX <name> "
        + "USING fts (<column>) WITH (" + FTS_OPTIONS + ").",
        refused("SELECT * FROM search('" + t + "', 'word3', 3)"));
    assertEquals("search on " + t + ": column 'text' has no full-text index, and lance-core "
        + "searches text only through one. Create it: ALTER TABLE " + t + " CREATE INDEX "
        + "text_fts USING fts (text) WITH (" + FTS_OPTIONS + ").",
        refused("SELECT * FROM search('" + t + "', 'word3', 3, search_columns => 'text')"));
  }

  @Test
  void aTemporaryViewIsRefusedNamingItAndTheTableToSearch() {
    String t = table("behind_tv");
    f.spark.sql("SELECT * FROM " + t).createOrReplaceTempView("tv");
    f.spark.sql("SELECT * FROM " + t).createOrReplaceGlobalTempView("gtv");
    try {
      assertEquals("vector_search: tv is a temporary view; the search functions take a table "
          + "or materialized view of the Lance catalog. Search the Lance table the view reads, "
          + "e.g. vector_search('lance.ns.items', ...).",
          refused("SELECT * FROM vector_search('tv', " + KEY + ", 3)"));
      assertEquals("search: global_temp.gtv is a temporary view; the search functions take a "
          + "table or materialized view of the Lance catalog. Search the Lance table the view "
          + "reads, e.g. search('lance.ns.items', ...).",
          refused("SELECT * FROM search('global_temp.gtv', 'word3', 3)"));
    } finally {
      f.spark.catalog().dropTempView("tv");
      f.spark.catalog().dropGlobalTempView("gtv");
    }
  }

  @Test
  void aTableColumnNamedLikeTheScoreColumnIsRefusedNamingIt() {
    String t = "lance." + ns + ".scored";
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, _Distance FLOAT, text STRING) "
        + "TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '4')");
    f.sql("INSERT INTO " + t + " VALUES (1, array(0.1F, 0.2F, 0.3F, 0.4F), 7.0F, 'a')");
    assertEquals("vector_search on " + t + ": the table has a column '_Distance', the name of "
        + "the search's _distance column. Rename the column, or search a materialized view that "
        + "selects it under another name.",
        refused("SELECT * FROM vector_search('" + t + "', 'vec', " + KEY + ", 1)"));
  }

  @Test
  void aViewWithRowsDeletedByARefreshReturnsOnlyLiveRowsAndBoundsK() {
    String t = table("deleting");
    String v = "lance." + ns + ".deleting_even";
    f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES ('vec.arrow.fixed-size-list.size' "
        + "= '4') AS SELECT id, vec FROM " + t + " WHERE id % 2 = 0");
    f.sql("ALTER TABLE " + v + " CREATE INDEX vec_idx USING ivf_flat (vec) WITH "
        + "(num_partitions = 2)");
    List<String> before = bruteForce(v, "", 3);
    long nearest = Long.parseLong(before.get(0).split("@")[0]);
    f.sql("DELETE FROM " + t + " WHERE id = " + nearest);
    f.sql("REFRESH MATERIALIZED VIEW " + v);
    // the deleted row is gone from the search, through the index built before the deletion
    List<String> expected = bruteForce(v, "", 149);
    assertEquals(149, expected.size());
    assertTrue(expected.stream().noneMatch(r -> r.startsWith(nearest + "@")), expected.toString());
    String search = "vector_search('" + v + "', 'vec', " + KEY + ", %d, nprobes => 2)";
    assertEquals(expected.subList(0, 3), searched("SELECT id, _distance FROM "
        + String.format(search, 3)));
    // k above the rows: every live row, nearest first
    assertEquals(expected, searched("SELECT id, _distance FROM " + String.format(search, 1000)));
    // lance-core fetches at most the 149 rows, whatever k: not bounded
    assertEquals(expected, searched("SELECT id, _distance FROM "
        + String.format(search, 7_000_000)));
  }

  @Test
  void tiedDistancesAreReturnedWithTheirDistanceAndKIsKept() {
    String t = "lance." + ns + ".tied";
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>) TBLPROPERTIES "
        + "('vec.arrow.fixed-size-list.size' = '4')");
    // ids n and n + 10 hold the same vector
    f.sql("INSERT INTO " + t + " SELECT id, array(CAST(id % 10 AS FLOAT), 0.0F, 0.0F, 0.0F) "
        + "FROM range(0, 20, 1, 1)");
    String search = "SELECT id, _distance FROM vector_search('" + t + "', 'vec', "
        + "array(3.2, 0.0, 0.0, 0.0), %d)";
    List<String> four = searched(String.format(search, 4));
    assertEquals(List.of("0.0400", "0.0400", "0.6400", "0.6400"),
        four.stream().map(r -> r.split("@")[1]).toList());
    assertEquals(new TreeSet<>(List.of("3", "13", "4", "14")),
        new TreeSet<>(four.stream().map(r -> r.split("@")[0]).toList()));
    // k = 3 cuts a tie: both rows at the nearest distance, then one of the two next
    List<String> three = searched(String.format(search, 3));
    assertEquals(List.of("0.0400", "0.0400", "0.6400"),
        three.stream().map(r -> r.split("@")[1]).toList());
    assertEquals(new TreeSet<>(List.of("3", "13")),
        new TreeSet<>(three.subList(0, 2).stream().map(r -> r.split("@")[0]).toList()));
    assertTrue(List.of("4", "14").contains(three.get(2).split("@")[0]), three.toString());
  }

  @Test
  void aKWhoseRowsWouldBeFetchedSlowlyFromAViewWithDeletionsIsRefused() {
    String t = "lance." + ns + ".big";
    String v = "lance." + ns + ".big_v";
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>) TBLPROPERTIES "
        + "('vec.arrow.fixed-size-list.size' = '2')");
    f.sql("INSERT INTO " + t + " SELECT id, array(CAST(sin(id) AS FLOAT), "
        + "CAST(cos(id) AS FLOAT)) FROM range(0, 40000, 1, 1)");
    f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES ('vec.arrow.fixed-size-list.size' "
        + "= '2') AS SELECT id, vec FROM " + t);
    f.sql("DELETE FROM " + t + " WHERE id = 7");
    f.sql("REFRESH MATERIALIZED VIEW " + v);
    String huge = "vector_search('" + v + "', 'vec', array(0.5, 0.5), 30000)";
    // only _distance: nothing is fetched by row id, not bounded
    assertEquals(30000, f.sql("SELECT _distance FROM " + huge).size());
    assertEquals("vector_search on " + v + ": k = 30000 is too large for this table: "
        + "fragments [0] have deleted rows, and lance-core 4.0.0 fetches each returned row of "
        + "such a fragment in time proportional to its rows (the largest has 40000; k times "
        + "that may be at most 1000000000, about 15 s; docs/search.md). Ask for k of at most "
        + "25000, or select only _distance, or rewrite the table without deleted rows (a "
        + "materialized view: REFRESH MATERIALIZED VIEW ... WITH (force = true); a table: "
        + "CREATE TABLE ... AS SELECT).",
        refused("SELECT id, _distance FROM " + huge));
  }

  @Test
  void theNearestReadOptionIsRefusedPointingToVectorSearch() {
    String t = table("opt");
    Exception e = assertThrows(Exception.class, () -> f.spark.read().option("nearest",
        "{\"column\":\"vec\",\"key\":[0.1,0.0,0.0,0.0],\"k\":3}").table(t).collectAsList());
    assertEquals("Read option 'nearest' on table " + t + " is not supported: it would return "
        + "every row, unordered and without _distance. Search with the vector_search table "
        + "function of the SQL extensions (spark.sql.extensions = "
        + "io.lancerest.spark.LanceRestSparkExtensions) instead: SELECT * FROM vector_search('"
        + t + "', 'vec', array(0.1, 0.0, 0.0, 0.0), 3) (docs/search.md).", e.getMessage());
  }

  private static String refused(String sql) {
    return assertThrows(SearchException.class, () -> f.sql(sql)).getMessage();
  }
}
