package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.index.Index;
import org.lance.ipc.FullTextQuery;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.Query;
import org.lance.ipc.ScanOptions;

/**
 * A view's indexes (ivf_flat, btree, fts, created from SQL) survive its refreshes, on the real
 * dir server and Spark: after each refresh, with rows inserted, updated and deleted in the
 * source, each index is listed on the view and covers every row, and a search through it equals
 * a brute-force answer over the view's rows; EXPLAIN REFRESH and the job say what happens.
 */
class ViewIndexRefreshTest {
  private static final int DIM = 4;
  static EngineFixture f;
  static String ns;
  static BufferAllocator allocator;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("vidx");
    allocator = new RootAllocator();
  }

  @AfterAll
  static void stop() {
    allocator.close();
    f.close();
  }

  private static String location(String name) {
    return CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, name), "table")
        .location();
  }

  /** {@code (id, vec 4-d, body)}: the vector and text of a row follow from its id and epoch. */
  private static String source(String name) {
    String t = "lance." + ns + "." + name;
    f.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, body STRING) "
        + "TBLPROPERTIES ('vec.arrow.fixed-size-list.size' = '" + DIM + "')");
    insert(t, 0, 200);
    return t;
  }

  private static String vecSql(String idExpr) {
    List<String> parts = new ArrayList<>();
    for (int d = 0; d < DIM; d++) {
      parts.add("CAST(sin(" + idExpr + " * " + (d + 1) + " * 0.37 + " + d + ") AS FLOAT)");
    }
    return "array(" + String.join(", ", parts) + ")";
  }

  private static void insert(String t, int from, int to) {
    f.sql("INSERT INTO " + t + " SELECT id, " + vecSql("id") + ", concat('word', id % 11, "
        + "' doc', id) FROM range(" + from + ", " + to + ", 1, 1)");
  }

  /** Inserts, updates (vector and text) and deletes scattered source rows. */
  private static void change(String t, int round) {
    insert(t, 1000 + round * 30, 1030 + round * 30);
    f.sql("UPDATE " + t + " SET vec = " + vecSql("(id + 5000)") + ", body = concat('moved', id) "
        + "WHERE id % 17 = " + round);
    f.sql("DELETE FROM " + t + " WHERE id % 13 = " + round);
  }

  /** The view's rows: id → (vector, text), read through Spark. */
  private static TreeMap<Long, Object[]> viewRows(String v, String text) {
    TreeMap<Long, Object[]> out = new TreeMap<>();
    for (Row r : f.sql("SELECT id, " + text + (text.equals("chunk") ? "" : ", vec") + " FROM "
        + v)) {
      float[] vec = null;
      if (r.size() > 2) {
        List<Object> l = r.getList(2);
        vec = new float[l.size()];
        for (int i = 0; i < vec.length; i++) {
          vec[i] = ((Number) l.get(i)).floatValue();
        }
      }
      out.put(r.getLong(0), new Object[] {vec, r.getString(1)});
    }
    return out;
  }

  private static List<Long> scan(String uri, ScanOptions o) {
    List<Long> out = new ArrayList<>();
    try (Dataset ds = Dataset.open(uri, allocator); LanceScanner s = ds.newScan(o);
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        FieldVector v = r.getVectorSchemaRoot().getVector("id");
        for (int i = 0; i < v.getValueCount(); i++) {
          out.add(((BigIntVector) v).get(i));
        }
      }
    } catch (Exception e) { // the scanner's close declares Exception
      throw new IllegalStateException(e);
    }
    return out;
  }

  private static Map<String, List<Index>> indexes(String uri) {
    Map<String, List<Index>> out = new TreeMap<>();
    try (Dataset ds = Dataset.open(uri, allocator)) {
      ds.getIndexes().forEach(i -> out.computeIfAbsent(i.name(), k -> new ArrayList<>()).add(i));
    }
    return out;
  }

  /** Live rows of the view the index's segments cover. */
  private static long indexedRows(String uri, String name) {
    try (Dataset ds = Dataset.open(uri, allocator)) {
      TreeSet<Integer> covered = new TreeSet<>();
      ds.getIndexes().stream().filter(i -> i.name().equals(name))
          .forEach(i -> covered.addAll(i.fragments().orElse(List.of())));
      return ds.getFragments().stream().filter(fr -> covered.contains(fr.getId()))
          .mapToLong(fr -> fr.metadata().getNumRows()).sum();
    }
  }

  private static double l2(float[] a, float[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += (a[i] - b[i]) * (a[i] - b[i]);
    }
    return s;
  }

  /** Every search through the view's indexes equals brute force over {@code rows}. */
  private static void checkSearches(String view, String uri, TreeMap<Long, Object[]> rows,
      String text, boolean vector, long newId) {
    if (vector) {
      for (long probe : List.of(newId, 4L, 100L)) {
        float[] key = (float[]) rows.getOrDefault(probe, rows.firstEntry().getValue())[0];
        List<Long> got = scan(uri, new ScanOptions.Builder().columns(List.of("id"))
            .nearest(new Query.Builder().setColumn("vec").setKey(key).setK(10).setNprobes(64)
                .build()).build());
        List<Long> brute = rows.entrySet().stream().sorted(Comparator.comparingDouble(e ->
            l2((float[]) e.getValue()[0], key))).limit(10).map(Map.Entry::getKey).toList();
        assertEquals(new TreeSet<>(brute), new TreeSet<>(got), "nearest to row " + probe);
      }
    }
    for (String w : List.of("word3", "word7", "doc" + newId)) {
      List<Long> brute = f.sql("SELECT DISTINCT id FROM " + view + " WHERE array_contains("
          + "split(" + text + ", ' '), '" + w + "') ORDER BY id").stream().map(r -> r.getLong(0))
          .toList();
      List<Long> got = scan(uri, new ScanOptions.Builder().columns(List.of("id"))
          .fullTextQuery(FullTextQuery.match(w, text)).build()).stream().distinct().sorted()
          .toList();
      assertEquals(brute, got, "full-text search of " + w);
    }
    for (long id : List.of(newId, 13L, 26L, 34L)) {
      assertEquals(rows.containsKey(id), !scan(uri, new ScanOptions.Builder()
          .columns(List.of("id")).filter("id = " + id).build()).isEmpty(), "id " + id);
    }
  }

  private static List<String> explainIndexLines(String v) {
    List<String> out = new ArrayList<>();
    for (Row r : f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + v)) {
      if (r.getString(0).equals("Index")) {
        out.add(r.getString(1));
      }
    }
    return out;
  }

  private static String lastJobMessage(String v) {
    List<Row> jobs = f.sql("SHOW JOBS FOR " + v);
    return jobs.stream().max(Comparator.comparing(r -> r.getTimestamp(5))).orElseThrow()
        .getString(11);
  }

  private void survivesRefreshes(String src, String v, String name, String text,
      boolean vector) {
    String uri = location(name);
    if (vector) {
      Map<String, String> config;
      try (Dataset ds = Dataset.open(uri, allocator)) {
        config = ds.getConfig();
      }
      f.sql("ALTER TABLE " + v + " CREATE INDEX vix USING ivf_flat (vec) WITH "
          + "(num_partitions = 2)");
      try (Dataset ds = Dataset.open(uri, allocator)) {
        Map<String, String> after = ds.getConfig();
        assertTrue(!config.isEmpty() && after.entrySet().containsAll(config.entrySet()),
            "recording the index's recipe keeps the view's config " + config + ": " + after);
      }
    }
    f.sql("ALTER TABLE " + v + " CREATE INDEX bix USING btree (id)");
    f.sql("ALTER TABLE " + v + " CREATE INDEX tix USING fts (" + text + ") WITH "
        + "(base_tokenizer = 'simple', language = 'English', max_token_length = 40, "
        + "lower_case = true, stem = false, remove_stop_words = false, ascii_folding = false, "
        + "with_position = false)");
    List<String> names = vector ? List.of("bix", "tix", "vix") : List.of("bix", "tix");
    long indexedBefore = indexedRows(uri, "bix");
    for (int round = 1; round <= 3; round++) {
      change(src, round);
      List<String> plan = explainIndexLines(v);
      assertEquals(names.size(), plan.size(), plan.toString());
      assertTrue(plan.get(0).startsWith("bix (btree, 1 segment): carried over"), plan.get(0));
      Row done = f.sql("REFRESH MATERIALIZED VIEW " + v).get(0);
      assertEquals("DONE", done.getString(1), done.toString());
      assertEquals(names, List.copyOf(indexes(uri).keySet()), "indexes after round " + round);
      TreeMap<Long, Object[]> rows = viewRows(v, text);
      long viewRows = f.sql("SELECT count(*) FROM " + v).get(0).getLong(0);
      for (String n : names) {
        assertEquals(viewRows, indexedRows(uri, n), "rows indexed by " + n + " after round "
            + round);
      }
      if (vector) {
        assertEquals(round + 1, indexes(uri).get("vix").size(), "a delta segment a refresh");
      }
      checkSearches(v, uri, rows, text, vector, 1000 + round * 30 + 28);
      String message = lastJobMessage(v);
      assertTrue(message.contains("indexes: bix: updated, ") && message.contains(
          viewRows + " of " + viewRows + " rows indexed"), message);
    }
    assertTrue(indexedRows(uri, "bix") > indexedBefore);
    // a full rebuild keeps them too
    Row full = f.sql("REFRESH MATERIALIZED VIEW " + v + " WITH (force = true)").get(0);
    assertEquals("DONE", full.getString(1), full.toString());
    assertEquals(names, List.copyOf(indexes(uri).keySet()));
    if (vector) {
      // about the rows its model covered: a delta segment next to the newest old one
      assertEquals(2, indexes(uri).get("vix").size(), "not retrained");
      assertTrue(lastJobMessage(v).contains("vix: updated"), lastJobMessage(v));
    }
    TreeMap<Long, Object[]> rows = viewRows(v, text);
    checkSearches(v, uri, rows, text, vector, 1000 + 3 * 30 + 28);
    // and so does compaction (OPTIMIZE MATERIALIZED VIEW)
    f.sql("OPTIMIZE MATERIALIZED VIEW " + v);
    assertEquals(names, List.copyOf(indexes(uri).keySet()));
    long viewRows = f.sql("SELECT count(*) FROM " + v).get(0).getLong(0);
    for (String n : names) {
      assertEquals(viewRows, indexedRows(uri, n), "rows indexed by " + n + " after OPTIMIZE");
    }
    checkSearches(v, uri, viewRows(v, text), text, vector, 1000 + 3 * 30 + 28);
  }

  @Test
  void aQueryViewKeepsItsIndexesThroughRefreshesRebuildAndCompaction() {
    String src = source("qsrc");
    String v = "lance." + ns + ".qv";
    f.sql("CREATE MATERIALIZED VIEW " + v + " TBLPROPERTIES ('vec.arrow.fixed-size-list.size' "
        + "= '" + DIM + "') AS SELECT id, vec, body FROM " + src + " WHERE id % 2 = 0");
    survivesRefreshes(src, v, "qv", "body", true);
  }

  @Test
  void aChunkerViewKeepsItsIndexesThroughRefreshesRebuildAndCompaction() {
    String src = source("csrc");
    String v = "lance." + ns + ".cv";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING CHUNKER 'io.lancerest.spark.mv.chunker."
        + "TextSplitter' OPTIONS (input_columns = 'body', chunk_size = 1, overlap = 0) AS "
        + "SELECT id, body FROM " + src);
    survivesRefreshes(src, v, "cv", "chunk", false);
  }

  /**
   * An aggregate view and a UDTF view (which replaces its rows on every refresh) keep a btree
   * index through two refreshes of a changing source: listed once, covering every row of the
   * view, and a key lookup on the view's table through it equals the view's rows.
   */
  @Test
  void anAggregateAndAUdtfViewKeepABtreeIndexThroughRefreshes() {
    String t = "lance." + ns + ".src_kinds";
    f.sql("CREATE TABLE " + t + " (id BIGINT, grp BIGINT, cat STRING, score BIGINT)");
    f.sql("INSERT INTO " + t + " SELECT id, id % 50, concat('c', id % 7), id * 37 % 101 FROM "
        + "range(0, 300, 1, 1)");
    Map<String, String> views = new java.util.LinkedHashMap<>();
    views.put("agg_v", "grp");
    views.put("udtf_v", "id");
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".agg_v AS SELECT grp, count(*) AS n, "
        + "sum(score) AS s FROM " + t + " GROUP BY grp");
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".udtf_v USING UDTF "
        + "'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY cat OPTIONS (k = 5, "
        + "order_by = 'score') AS SELECT id, cat, score FROM " + t);
    views.forEach((name, key) -> f.sql("ALTER TABLE lance." + ns + "." + name
        + " CREATE INDEX bix USING btree (" + key + ")"));
    for (int round = 0; round < 2; round++) {
      f.sql("INSERT INTO " + t + " SELECT id, id % 60, concat('c', id % 9), id * 41 % 103 FROM "
          + "range(" + (1000 + round * 40) + ", " + (1040 + round * 40) + ", 1, 1)");
      f.sql("UPDATE " + t + " SET score = score + 500 WHERE id % 23 = " + round);
      f.sql("DELETE FROM " + t + " WHERE id % 19 = " + round);
      for (Map.Entry<String, String> e : views.entrySet()) {
        String v = "lance." + ns + "." + e.getKey();
        String key = e.getValue();
        f.sql("REFRESH MATERIALIZED VIEW " + v);
        String uri = location(e.getKey());
        Map<String, List<Index>> idx = indexes(uri);
        assertEquals(List.of("bix"), new ArrayList<>(idx.keySet()), v + " after refresh "
            + round);
        assertEquals(1, idx.get("bix").size(), v + " after refresh " + round);
        long rows = f.sql("SELECT count(*) FROM " + v).get(0).getLong(0);
        assertTrue(rows > 0, v);
        assertEquals(rows, indexedRows(uri, "bix"), v + ": every row indexed after refresh "
            + round);
        for (long k : List.of(3L, 55L, 1005L, 1041L)) {
          List<Long> spark = new ArrayList<>();
          f.sql("SELECT " + key + " FROM " + v + " WHERE " + key + " = " + k)
              .forEach(r -> spark.add(r.getLong(0)));
          assertEquals(spark, scanKey(uri, key, k), v + " lookup of " + k);
        }
      }
    }
  }

  /** The {@code key} values equal to {@code k} in the view's table, read through lance-core. */
  private static List<Long> scanKey(String uri, String key, long k) {
    List<Long> out = new ArrayList<>();
    try (Dataset ds = Dataset.open(uri, allocator); LanceScanner s = ds.newScan(
            new ScanOptions.Builder().columns(List.of(key)).filter(key + " = " + k).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        BigIntVector v = (BigIntVector) r.getVectorSchemaRoot().getVector(key);
        for (int i = 0; i < v.getValueCount(); i++) {
          out.add(v.get(i));
        }
      }
    } catch (Exception e) { // the scanner's close declares Exception
      throw new IllegalStateException(e);
    }
    return out;
  }
}
