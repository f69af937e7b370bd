package io.lancerest.spark.mv.query;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.List;

/**
 * Source tables and checks shared by the query-view refresh tests: a source {@code (id, name,
 * score)} written one fragment per insert, a view over it, and the comparison of a view with
 * the SELECT it materializes.
 */
final class QueryViewTables {
  /** The view definition of the fragment-diff and range tests; {@code %s} is the source. */
  static final String SELECT = "SELECT id, upper(name) AS n, score * 2 AS s2 "
      + "FROM %s WHERE score %% 5 <> 0";
  /** The view columns {@link #SELECT} projects. */
  static final String COLUMNS = "id, n, s2";

  private QueryViewTables() {}

  /** A source of {@code inserts} fragments of {@code rows} rows each, and its populated view. */
  static String[] viewOver(EngineFixture f, String ns, int inserts, int rows) {
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT)");
    for (int i = 0; i < inserts; i++) {
      insert(f, src, (long) i * rows, rows);
    }
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + String.format(SELECT, src));
    return new String[] {src, v};
  }

  /** Ids {@code [from, from + rows)}, written by one task: one new fragment. */
  static void insert(EngineFixture f, String table, long from, int rows) {
    f.sql("INSERT INTO " + table + " SELECT /*+ REPARTITION(1) */ id, concat('n', id), "
        + "CAST(id % 13 AS INT) FROM range(" + from + ", " + (from + rows) + ")");
  }

  /** The view over {@code src} holds exactly the rows of {@link #SELECT}. */
  static void assertSameAsSelect(EngineFixture f, String src, String v) {
    assertSameAsSelect(f, SELECT, COLUMNS, src, v);
  }

  /**
   * The view {@code v} holds exactly the rows of {@code select} over {@code src} (as a multiset,
   * columns {@code columns}), and no source row twice.
   */
  static void assertSameAsSelect(EngineFixture f, String select, String columns, String src,
      String v) {
    assertEquals(f.rows(String.format(select, src)), f.rows("SELECT " + columns + " FROM " + v));
    long distinct = f.sql("SELECT count(DISTINCT __source_row_id) FROM " + v).get(0).getLong(0);
    long all = f.sql("SELECT count(*) FROM " + v).get(0).getLong(0);
    assertEquals(all, distinct, "no duplicated source rows");
  }

  /** Where the catalog says table {@code ns.table} lives. */
  static String location(EngineFixture f, String ns, String table) {
    return CatalogBinding.of(f.spark, "lance").locate(List.of(ns, table), "table").location();
  }

  /** The index folders under the view {@code ns.v}'s root, by name. */
  static List<String> indexFolders(EngineFixture f, String ns) throws java.io.IOException {
    String loc = location(f, ns, "v");
    java.nio.file.Path dir = java.nio.file.Path.of(loc.startsWith("file:")
        ? java.net.URI.create(loc) : java.net.URI.create("file://" + loc)).resolve(
        "_mv/source_ids");
    if (!java.nio.file.Files.isDirectory(dir)) {
      return List.of();
    }
    try (var list = java.nio.file.Files.list(dir)) {
      return list.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** The index folder names of the view's current fragments recorded as indexed. */
  static List<String> indexedFragments(EngineFixture f, String ns) {
    List<String> out = new java.util.ArrayList<>();
    try (org.apache.arrow.memory.BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(location(f, ns, "v"), a)) {
      java.util.Map<String, String> md = ds.getSchema().getCustomMetadata();
      var rec = io.lancerest.spark.mv.rowindex.FragmentSourceRanges.parse(md == null ? null
          : md.get(io.lancerest.spark.mv.rowindex.FragmentSourceRanges.KEY));
      for (org.lance.Fragment fr : ds.getFragments()) {
        var e = rec.get(fr.getId());
        if (e != null && e.indexed()) {
          out.add(fr.metadata().getFiles().get(0).getPath().replace(".lance", ""));
        }
      }
    }
    return out.stream().sorted().toList();
  }
}
