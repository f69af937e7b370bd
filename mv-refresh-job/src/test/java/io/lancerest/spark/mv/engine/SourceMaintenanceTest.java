package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.LogCapture;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.testing.OneBatch;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ReadOptions;
import org.lance.compaction.CompactionOptions;
import org.lance.merge.MergeInsertParams;

/**
 * OPTIMIZE and VACUUM of a view's <em>source</em> between refreshes, for every kind: a
 * compaction moves rows to new fragments (stable row ids: they keep their ids and update
 * versions), and the next refresh keeps what it moved instead of computing it again; a vacuum
 * that removed the source version the view reflects makes the refresh take its safe path, which
 * the log and EXPLAIN REFRESH say. After each, the view equals a view created from scratch.
 */
class SourceMaintenanceTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** The three kinds, each over {@code src}: its definition and the columns compared. */
  enum Kind {
    QUERY("AS SELECT id, upper(body) AS ub, score * 2 AS s2 FROM %s WHERE score % 5 <> 0",
        "__source_row_id, id, ub, s2"),
    CHUNKER("USING CHUNKER 'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns"
        + " = 'body', chunk_size = 2, overlap = 0) AS SELECT id, body FROM %s",
        "__source_row_id, __child_index, id, chunk, char_offset"),
    UDTF("USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf' PARTITION BY cat OPTIONS (k = '3', "
        + "order_by = 'id') AS SELECT cat, id, body FROM %s", "cat, id, body, rank");

    final String definition;
    final String columns;

    Kind(String definition, String columns) {
      this.definition = definition;
      this.columns = columns;
    }
  }

  /** One view over its own source, in its own namespace. */
  private record Setup(Kind kind, String ns, String src, String view) {
    List<String> viewId() {
      return List.of(ns, "v");
    }

    /** The view's rows (its compared columns). */
    List<String> rows() {
      return f.rows("SELECT " + kind.columns + " FROM " + view);
    }

    /** A view of the same definition created now, from scratch; its rows. */
    List<String> fresh() {
      String name = "lance." + ns + ".fresh_" + Math.abs(System.nanoTime() % 100_000);
      f.sql("CREATE MATERIALIZED VIEW " + name + " " + kind.definition.replace("%s", src));
      try {
        return f.rows("SELECT " + kind.columns + " FROM " + name);
      } finally {
        f.sql("DROP MATERIALIZED VIEW " + name);
      }
    }

    RefreshResult refresh() {
      return f.views().refresh(viewId(), RefreshOptions.DEFAULTS);
    }

    RefreshPlan explain() {
      return f.views().explainRefresh(viewId(), RefreshOptions.DEFAULTS);
    }

    long watermark() {
      return f.views().describe(viewId()).state().baseTableVersion();
    }
  }

  /** A source of 4 fragments of 40 rows (ids 0..159) and a view of {@code kind} over it. */
  private static Setup setUp(Kind kind, String prefix) {
    String ns = f.namespace(prefix);
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, cat STRING, body STRING, score INT)");
    for (int i = 0; i < 4; i++) {
      insert(src, i * 40, 40);
    }
    String view = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + view + " " + kind.definition.replace("%s", src));
    assertEquals(4, fragments(ns), "one fragment per INSERT");
    return new Setup(kind, ns, src, view);
  }

  /** {@code n} rows from id {@code from}, one fragment. */
  private static void insert(String src, long from, int n) {
    f.sql("INSERT INTO " + src + " SELECT id, CAST(id % 4 AS STRING), concat('doc ', CAST(id AS "
        + "STRING), ' words here'), CAST(id % 10 AS INT) FROM range(" + from + ", "
        + (from + n) + ", 1, 1)");
  }

  /**
   * The source changes of the tests: 20 new rows (ids 1000..1019), lance-spark UPDATE of ids 4
   * and 5 (new row ids), an update in place of ids 11, 51 and 91 (merge_insert: same row ids,
   * newer {@code _row_last_updated_at_version}; rows every view has), and 9 deleted rows.
   */
  private static void change(Setup s) throws Exception {
    insert(s.src, 1000, 20);
    f.sql("UPDATE " + s.src + " SET body = concat(body, ' updated'), score = 7 WHERE id IN (4, 5)");
    updateInPlace(s, new long[] {11, 51, 91});
    f.sql("DELETE FROM " + s.src + " WHERE id IN (6, 7, 8) OR id BETWEEN 120 AND 125");
  }

  /** Ids the changes of {@link #change} touched (new, updated or deleted). */
  private static final String CHANGED_IDS = "id >= 1000 OR id IN (4, 5, 6, 7, 8, 11, 51, 91) OR "
      + "id BETWEEN 120 AND 125";

  /**
   * OPTIMIZE through the catalog, deletions materialized; the source ends as one fragment.
   * (lance-spark's OPTIMIZE writes the compacted rows without their update versions, which
   * lance-core then reports as 1: the rows updated in place before must still be seen.)
   */
  private static void optimize(Setup s) {
    f.sql("OPTIMIZE " + s.src + " WITH (materialize_deletions = true, "
        + "materialize_deletions_threshold = 0.0)");
    f.sql("REFRESH TABLE " + s.src);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = open(a, s.ns, null)) {
      assertEquals(1, ds.getFragments().size(), "OPTIMIZE compacted the source");
      for (Fragment fr : ds.getFragments()) {
        assertEquals(null, fr.metadata().getDeletionFile(), "deletions were materialized");
      }
    }
  }

  /** VACUUM through the catalog; asserts that source version {@code gone} was removed. */
  private static void vacuum(Setup s, long gone) {
    f.sql("VACUUM " + s.src);
    try (BufferAllocator a = new RootAllocator()) {
      Exception e = assertThrows(Exception.class, () -> open(a, s.ns, gone).close());
      assertTrue(String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT)
          .contains("not found"), e.toString());
    }
  }

  private static Dataset open(BufferAllocator a, String ns, Long version) {
    ReadOptions.Builder ro = new ReadOptions.Builder();
    if (version != null) {
      ro.setVersion(version);
    }
    return Dataset.open(a, TableStats.location(f, ns, "src"), ro.build());
  }

  private static int fragments(String ns) {
    return TableStats.fragments(f, ns, "src");
  }

  private static long count(String sql) {
    return f.sql(sql).get(0).getLong(0);
  }

  /** EXPLAIN REFRESH through SQL, as name → value. */
  private static Map<String, String> explainSql(Setup s) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Row r : f.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + s.view)) {
      out.put(r.getString(0), r.isNullAt(1) ? null : r.getString(1));
    }
    return out;
  }

  /**
   * Why refreshes read the source's commits (SourceHistory): lance-core's {@code
   * Dataset.compact} keeps the rows' update versions, lance-spark 0.4.0's OPTIMIZE does not
   * (lance-core then reports version 1). Should this fail, lance-spark keeps them too.
   */
  @Test
  void lanceSparkOptimizeLosesTheRowUpdateVersionsThatLanceCoreCompactKeeps() {
    String ns = f.namespace("rv");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, cat STRING, body STRING, score INT)");
    insert(src, 0, 5);
    insert(src, 5, 5);
    f.sql("UPDATE " + src + " SET score = 9 WHERE id = 1");
    String versions = "SELECT id, _row_last_updated_at_version FROM " + src
        + " WHERE id IN (1, 6)";
    List<String> before = f.rows(versions);
    assertTrue(before.get(0).startsWith("1|") && !before.get(0).equals("1|1"), before.toString());
    try (BufferAllocator a = new RootAllocator(); Dataset ds = open(a, ns, null)) {
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true).build());
    }
    f.sql("REFRESH TABLE " + src);
    assertEquals(1, fragments(ns));
    assertEquals(before, f.rows(versions), "Dataset.compact keeps them");
    insert(src, 10, 5);
    f.sql("OPTIMIZE " + src);
    f.sql("REFRESH TABLE " + src);
    assertEquals(1, fragments(ns));
    assertEquals(List.of("1|1", "6|1"), f.rows(versions), "OPTIMIZE reports version 1");
  }

  // ---- a compaction of the source: moved rows are kept, not computed again ----

  @Test
  void queryViewKeepsTheRowsACompactionMoved() throws Exception {
    Setup s = setUp(Kind.QUERY, "cq");
    // a LIMIT view compares row ids and update versions instead of fragments
    String limited = "SELECT id, upper(body) AS ub FROM " + s.src + " WHERE score % 5 <> 0 "
        + "LIMIT 1000";
    f.sql("CREATE MATERIALIZED VIEW lance." + s.ns + ".lv AS " + limited);
    List<String> untouched = f.rows("SELECT __source_row_id, id, ub, s2 FROM " + s.view
        + " WHERE NOT (" + CHANGED_IDS + ")");
    long deletedFromView = count("SELECT count(*) FROM " + s.view + " WHERE " + CHANGED_IDS);
    change(s);
    optimize(s);
    long written = count("SELECT count(*) FROM " + s.src + " WHERE (" + CHANGED_IDS
        + ") AND score % 5 <> 0");
    RefreshPlan plan = s.explain();
    assertEquals(RefreshPlan.Mode.INCREMENTAL, plan.mode(), plan.toString());
    assertTrue(plan.note().contains("a compaction only moved are kept, not rewritten"),
        plan.toString());
    RefreshResult r = s.refresh();
    assertEquals(written, r.rowsInserted(), "only new and updated rows are written: " + r);
    assertEquals(deletedFromView, r.rowsDeleted(), r.toString());
    assertEquals(s.fresh(), s.rows());
    assertEquals(untouched, f.rows("SELECT __source_row_id, id, ub, s2 FROM " + s.view
        + " WHERE NOT (" + CHANGED_IDS + ")"));
    f.views().refresh(List.of(s.ns, "lv"), RefreshOptions.DEFAULTS);
    assertEquals(f.rows(limited), f.rows("SELECT id, ub FROM lance." + s.ns + ".lv"),
        "the rows updated in place before the compaction are seen by the row comparison too");

    // a compaction alone: nothing to read, nothing written or deleted
    insert(s.src, 2000, 10);
    insert(s.src, 2010, 10);
    s.refresh();
    optimize(s);
    plan = s.explain();
    assertEquals(RefreshPlan.Mode.INCREMENTAL, plan.mode(), plan.toString());
    assertEquals(List.of(), plan.fragmentsToRead(), plan.toString());
    assertEquals(0, plan.rowsToRead(), plan.toString());
    assertEquals(Long.valueOf(0), plan.rowsToWrite(), plan.toString());
    assertEquals(Long.valueOf(0), plan.viewRowsToDelete(), plan.toString());
    assertTrue(plan.reason().contains(" more were only moved by a compaction and are kept "
        + "without reading them"), plan.reason());
    r = s.refresh();
    assertEquals(RefreshResult.JobStatus.DONE, r.status(), r.toString());
    assertEquals(0, r.rowsInserted(), r.toString());
    assertEquals(0, r.rowsDeleted(), r.toString());
    assertEquals(s.fresh(), s.rows());
  }

  @Test
  void chunkerViewCallsTheChunkerOnlyForChangedParentsAfterACompaction() throws Exception {
    Setup s = setUp(Kind.CHUNKER, "cc");
    change(s);
    optimize(s);
    RefreshResult r = s.refresh();
    // 20 new, 2 with new row ids (UPDATE), 3 updated in place; never the 146 moved ones
    assertEquals(25L, r.details().get("parents_expanded"), r.toString());
    // 9 deleted, and the old row ids of the 2 UPDATEd rows
    assertEquals(11L, r.details().get("parents_removed"), r.toString());
    assertEquals(s.fresh(), s.rows());

    insert(s.src, 2000, 10);
    insert(s.src, 2010, 10);
    s.refresh();
    optimize(s);
    Map<String, String> plan = explainSql(s);
    assertEquals("incremental", plan.get("Mode"), plan.toString());
    assertTrue(plan.get("Reason").contains("; 0 parents to expand (0 changed), 0 removed"),
        plan.toString());
    assertTrue(plan.get("Reason").contains(" more were only moved by a compaction, not read"),
        plan.toString());
    assertEquals("0 of 1 []", plan.get("Source fragments to read"), plan.toString());
    r = s.refresh();
    assertEquals(0L, r.details().get("parents_expanded"), "the chunker ran for no parent: " + r);
    assertEquals(0L, r.details().get("parents_removed"), r.toString());
    assertEquals(0, r.rowsInserted() + r.rowsDeleted(), r.toString());
    assertEquals(s.fresh(), s.rows());
  }

  @Test
  void udtfViewIsRebuiltOnceAfterChangesAndNotAtAllAfterACompactionAlone() throws Exception {
    Setup s = setUp(Kind.UDTF, "cu");
    change(s);
    optimize(s);
    RefreshResult r = s.refresh();
    // rows changed: one rebuild, each of the 4 partitions computed once
    assertEquals(4L, r.details().get("partitions_computed"), r.toString());
    assertEquals(4L, r.details().get("udtf_calls"), r.toString());
    assertEquals(s.fresh(), s.rows());

    insert(s.src, 2000, 10);
    insert(s.src, 2010, 10);
    s.refresh();
    long before = s.watermark();
    optimize(s);
    RefreshPlan plan = s.explain();
    assertEquals(RefreshPlan.Mode.INCREMENTAL, plan.mode(), plan.toString());
    assertTrue(plan.reason().startsWith("no row of the source changed since version " + before
        + " (versions " + (before + 1) + " to " + (before + 2) + ": 1 compaction, no row "
        + "changed): no partition is computed"), plan.toString());
    assertEquals(Long.valueOf(0), plan.rowsToWrite(), plan.toString());
    assertEquals(Long.valueOf(0), plan.viewRowsToDelete(), plan.toString());
    r = s.refresh();
    assertEquals(RefreshResult.JobStatus.DONE, r.status(), r.toString());
    assertEquals(0L, r.details().get("udtf_calls"), "no partition computed again: " + r);
    assertEquals(0L, r.details().get("partitions_computed"), r.toString());
    assertEquals(0, r.rowsInserted() + r.rowsDeleted(), r.toString());
    assertEquals(before + 2, s.watermark(), "the view reflects the compacted version "
        + "(OPTIMIZE commits twice: fragment ids reserved, then the rewrite)");
    assertEquals(s.fresh(), s.rows());
  }

  // ---- a vacuum that removed the watermark version: the safe path, logged and explained ----

  /**
   * Refreshes to watermark {@code w}, then commits past it (an insert, rows 13 and 53 updated
   * in place), compacts and vacuums so that {@code w} is gone, then changes the source again.
   * The compaction left no trace of the update in place but the history the vacuum removed: a
   * comparison of row ids and update versions would keep those two rows as they were.
   */
  private static long vacuumPastTheWatermark(Setup s) throws Exception {
    insert(s.src, 500, 10);
    s.refresh();
    long w = s.watermark();
    insert(s.src, 600, 10);
    updateInPlace(s, new long[] {13, 53});
    optimize(s);
    vacuum(s, w);
    change(s);
    return w;
  }

  private static void assertFallbackLogged(Setup s, long w, LogCapture log) {
    String text = log.text();
    String line = text.lines().filter(l -> l.contains(s.ns + ".v") && l.contains("source "
        + "version " + w + " (the view's watermark) was removed")).findFirst().orElse(null);
    assertNotNull(line, "the fallback is logged with the view and the version:\n" + text);
    assertTrue(line.startsWith("WARN "), line);
  }

  @Test
  void queryViewAfterAVacuumIsRebuilt() throws Exception {
    Setup s = setUp(Kind.QUERY, "vq");
    long w = vacuumPastTheWatermark(s);
    RefreshPlan plan = s.explain();
    assertEquals(RefreshPlan.Mode.FULL, plan.mode(), plan.toString());
    assertTrue(plan.reason().matches("source version " + w + " \\(the view's watermark\\) was "
        + "removed by a cleanup of the source \\(which no longer lists it; its oldest version "
        + "is \\d+\\); what "
        + "changed since then cannot be told, so the view is rebuilt from source version "
        + plan.toVersion()), plan.reason());
    assertEquals(null, plan.fragmentsToRead(), "every fragment is read: " + plan);
    assertEquals(Long.valueOf(plan.viewRows()), plan.viewRowsToDelete(), plan.toString());
    Map<String, String> sql = explainSql(s);
    assertEquals("full", sql.get("Mode"), sql.toString());
    assertEquals(plan.reason(), sql.get("Reason"));
    long viewRows = count("SELECT count(*) FROM " + s.view);
    RefreshResult r;
    try (LogCapture log = new LogCapture("io.lancerest.spark.mv")) {
      r = s.refresh();
      assertFallbackLogged(s, w, log);
    }
    assertEquals(RefreshResult.JobStatus.DONE, r.status(), r.toString());
    assertEquals(viewRows, r.rowsDeleted(), "every view row replaced: " + r);
    assertEquals(count("SELECT count(*) FROM " + s.view), r.rowsInserted(), r.toString());
    assertEquals(s.fresh(), s.rows());
    assertEquals(count("SELECT count(*) FROM " + s.view), count("SELECT count(DISTINCT "
        + "__source_row_id) FROM " + s.view), "no source row twice in the view");
    // the next refresh compares fragments again
    insert(s.src, 3000, 5);
    assertTrue(s.explain().reason().startsWith("source changed since version "),
        s.explain().toString());
  }

  @Test
  void chunkerViewAfterAVacuumExpandsEveryParentAgain() throws Exception {
    Setup s = setUp(Kind.CHUNKER, "vc");
    long w = vacuumPastTheWatermark(s);
    RefreshPlan plan = s.explain();
    assertEquals(RefreshPlan.Mode.FULL, plan.mode(), plan.toString());
    assertTrue(plan.reason().startsWith("source version " + w + " (the view's watermark) was "
        + "removed by a cleanup of the source"), plan.reason());
    assertTrue(plan.reason().contains("which parents changed since then cannot be told, so "
        + "every parent is expanded again from source version " + plan.toVersion()),
        plan.reason());
    assertEquals(null, plan.fragmentsToRead(), plan.toString());
    long parents = count("SELECT count(*) FROM " + s.src);
    RefreshResult r;
    try (LogCapture log = new LogCapture("io.lancerest.spark.mv")) {
      r = s.refresh();
      assertFallbackLogged(s, w, log);
    }
    assertEquals(RefreshResult.JobStatus.DONE, r.status(), r.toString());
    assertEquals(parents, r.details().get("parents_expanded"), r.toString());
    assertEquals(s.fresh(), s.rows());
    assertEquals(count("SELECT count(*) FROM " + s.view), count("SELECT count(*) FROM (SELECT "
        + "DISTINCT __source_row_id, __child_index FROM " + s.view + ")"),
        "no chunk twice in the view");
  }

  @Test
  void udtfViewAfterAVacuumIsRebuilt() throws Exception {
    Setup s = setUp(Kind.UDTF, "vu");
    long w = vacuumPastTheWatermark(s);
    RefreshPlan plan = s.explain();
    assertEquals(RefreshPlan.Mode.FULL, plan.mode(), plan.toString());
    assertTrue(plan.reason().matches("source version " + w + " \\(the view's watermark\\) was "
        + "removed by a cleanup of the source \\(which no longer lists it; its oldest version "
        + "is \\d+\\); a UDTF "
        + "view is rebuilt; 4 partitions to compute"), plan.reason());
    RefreshResult r;
    try (LogCapture log = new LogCapture("io.lancerest.spark.mv")) {
      r = s.refresh();
      assertFallbackLogged(s, w, log);
    }
    assertEquals(RefreshResult.JobStatus.DONE, r.status(), r.toString());
    assertEquals(4L, r.details().get("partitions_computed"), r.toString());
    assertEquals(s.fresh(), s.rows());
    assertEquals(count("SELECT count(*) FROM " + s.view), count("SELECT count(*) FROM (SELECT "
        + "DISTINCT cat, rank FROM " + s.view + ")"), "no rank twice in a partition");
  }

  /**
   * Updates rows in place with lance-core's merge_insert on {@code id}: the rows keep their row
   * ids and get a newer {@code _row_last_updated_at_version} (lance-spark's UPDATE gives them
   * new ids instead).
   */
  private static void updateInPlace(Setup s, long[] ids) throws Exception {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = open(a, s.ns, null)) {
      Schema schema = new Schema(ds.getSchema().getFields());
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, a)) {
        root.allocateNew();
        for (int i = 0; i < ids.length; i++) {
          ((BigIntVector) root.getVector("id")).setSafe(i, ids[i]);
          ((VarCharVector) root.getVector("cat")).setSafe(i,
              String.valueOf(ids[i] % 4).getBytes(StandardCharsets.UTF_8));
          ((VarCharVector) root.getVector("body")).setSafe(i,
              ("in place " + ids[i] + " new words").getBytes(StandardCharsets.UTF_8));
          ((IntVector) root.getVector("score")).setSafe(i, 3);
        }
        root.setRowCount(ids.length);
        try (ArrowReader reader = new OneBatch(a, root);
            ArrowArrayStream stream = ArrowArrayStream.allocateNew(a)) {
          Data.exportArrayStream(a, reader, stream);
          MergeInsertParams params = new MergeInsertParams(List.of("id")).withMatchedUpdateAll()
              .withNotMatched(MergeInsertParams.WhenNotMatched.DoNothing);
          ds.mergeInsert(params, stream).dataset().close();
        }
      }
    }
    f.sql("REFRESH TABLE " + s.src);
  }
}
