package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryViewTables.SELECT;
import static io.lancerest.spark.mv.query.QueryViewTables.assertSameAsSelect;
import static io.lancerest.spark.mv.query.QueryViewTables.insert;
import static io.lancerest.spark.mv.query.QueryViewTables.location;
import static io.lancerest.spark.mv.query.QueryViewTables.viewOver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.LogCapture;
import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.engine.EngineFixture;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.fragments.FragmentDiff;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.compaction.CompactionOptions;

/**
 * Incremental refresh of query views from the source fragments that changed since the
 * watermark: which fragments are read, and that the view always equals a from-scratch SELECT.
 */
class QueryFragmentDiffTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  @BeforeEach
  void beforeEach() {
    clearProbes();
  }

  /** What the last refresh of the test reported; a fresh one per refresh. */
  private static Probes probes = new Probes();

  private static void clearProbes() {
    // a test that silently fell back to the full scan must not pass on earlier values
    probes = new Probes();
  }

  private static FragmentDiff diff() {
    return probes.get(RefreshListener.Probe.FRAGMENT_DIFF);
  }

  private static Integer writeTasks() {
    return probes.get(RefreshListener.Probe.WRITE_TASKS);
  }

  private static List<Integer> scannedOrNull() {
    return probes.get(RefreshListener.Probe.SOURCE_FRAGMENTS_READ);
  }

  @AfterEach
  void reset() {
    f.spark.conf().unset(LocalRefreshWrite.MAX_ROWS_CONF);
  }

  /** Small changes are written on the driver; tests of the write tasks turn that off. */
  private static void sparkWritePath() {
    f.spark.conf().set(LocalRefreshWrite.MAX_ROWS_CONF, "0");
  }

  /** The fragments the last refresh read, asserting it took the fragment-diff path. */
  private static List<Integer> scanned() {
    assertNotNull(scannedOrNull(), "the fragment-diff path ran");
    assertNotNull(diff(), "the fragment-diff path ran");
    return scannedOrNull();
  }

  private static RefreshResult refresh(String ns) {
    return refresh(ns, RefreshOptions.DEFAULTS);
  }

  /** Refreshes with the probes cleared first (CREATE MATERIALIZED VIEW also sets them). */
  private static RefreshResult refresh(String ns, RefreshOptions o) {
    boolean changedOnly = probes.readChangedFragmentsOnly();
    clearProbes();
    return f.views().refresh(List.of(ns, "v"), o, probes.changedFragmentsOnly(changedOnly));
  }

  private static List<Integer> fragmentIds(String ns) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, "src"), a)) {
      List<Integer> ids = new ArrayList<>();
      for (Fragment fr : ds.getFragments()) {
        ids.add(fr.getId());
      }
      return ids;
    }
  }

  /** Compacts the source with lance-core (stable row ids: the rows keep their ids). */
  private static void compact(String ns) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, "src"), a)) {
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true).build());
    }
    f.spark.catalog().refreshTable("lance." + ns + ".src");
  }

  /** What the engine logged while {@code r} ran. */
  private static String logOf(Runnable r) {
    try (LogCapture log = new LogCapture("io.lancerest.spark.mv")) {
      r.run();
      return log.text();
    }
  }

  /** A source {@code ns.src (id, w)} with rows 0 to 4. */
  private static String source(String ns) {
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, w BIGINT)");
    f.sql("INSERT INTO " + src + " SELECT id, id * 10 FROM range(0, 5)");
    return src;
  }

  /**
   * The refresh's decision line (docs/operations.md quotes it) is true on every path: a first
   * refresh and a forced one say they rebuild, from how many source rows, replacing how many
   * view rows; an incremental one says what the fragment diff found.
   */
  @Test
  void theDecisionLineSaysWhatEachRefreshDoes() {
    String ns = f.namespace("logline");
    String src = source(ns);
    String first = logOf(() -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS SELECT id, "
        + "w FROM " + src + " WHERE id % 2 = 0"));
    assertTrue(first.contains("(watermark 0): rebuilding the view (first refresh): writing every "
        + "row the definition selects of the 5 source rows, replacing the 0 rows in the view"),
        first);
    assertTrue(first.contains("wrote 3 rows"), first);
    assertFalse(first.contains("0 source rows, 0 in the view"), first);

    f.sql("INSERT INTO " + src + " SELECT id, id * 10 FROM range(5, 7)");
    String incremental = logOf(() -> refresh(ns));
    assertTrue(incremental.contains("0 source rows left changed fragments, 0 of them in the view "
        + "(no view fragment read)"), incremental);
    assertTrue(incremental.contains(" fragments (only those the commits since touched were "
        + "compared)"), incremental);
    assertFalse(incremental.contains("rebuilding"), incremental);

    RefreshResult[] r = new RefreshResult[1];
    String forced = logOf(() -> r[0] = refresh(ns, RefreshOptions.builder().force(true).build()));
    assertEquals(4, r[0].rowsInserted(), r[0].toString());
    assertEquals(4, r[0].rowsDeleted(), r[0].toString());
    assertTrue(forced.contains("rebuilding the view (force = true): writing every row the definition "
        + "selects of the 7 source rows, replacing the 4 rows in the view"), forced);
    assertTrue(forced.contains("wrote 4 rows"), forced);
  }

  /** With a LIMIT the refresh compares row ids: its rebuild and incremental lines say so. */
  @Test
  void theDecisionLinesOfAViewWithALimit() {
    String ns = f.namespace("loglimit");
    String src = source(ns);
    String first = logOf(() -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS SELECT id, "
        + "w FROM " + src + " LIMIT 2"));
    assertTrue(first.contains("rebuilding the view (first refresh): writing 2 (LIMIT 2) of the "
        + "5 source rows, replacing the 0 rows in the view"), first);
    f.sql("INSERT INTO " + src + " SELECT id, id * 10 FROM range(5, 7)");
    String next = logOf(() -> refresh(ns));
    assertTrue(next.contains("7 source rows, 2 in the view; writing 0 (0 changed in place), "
        + "deleting 0"), next);
    assertEquals(2, f.sql("SELECT * FROM lance." + ns + ".v").size());
  }

  @Test
  void anAppendReadsOnlyTheNewFragment() {
    String ns = f.namespace("app");
    String[] t = viewOver(f, ns, 3, 200);
    sparkWritePath();
    List<Integer> before = fragmentIds(ns);
    insert(f, t[0], 600, 50);
    List<Integer> added = new ArrayList<>(fragmentIds(ns));
    added.removeAll(before);
    RefreshResult r = refresh(ns);
    assertEquals(1, added.size(), added.toString());
    assertEquals(added, scanned());
    assertEquals(List.of(), diff().deletionsChanged);
    assertEquals(List.of(), diff().replaced);
    assertEquals(Integer.valueOf(1), writeTasks(), "one small changed fragment: one task");
    assertEquals(f.sql(String.format(SELECT, t[0]) + " AND id >= 600").size(), r.rowsInserted());
    assertEquals(0, r.rowsDeleted());
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void deletesReadNoFragmentAndRemoveTheViewRows() {
    String ns = f.namespace("del");
    String[] t = viewOver(f, ns, 2, 100);
    f.sql("DELETE FROM " + t[0] + " WHERE id < 20 OR id = 150");
    List<Integer> frags = fragmentIds(ns);
    RefreshResult r = refresh(ns);
    assertEquals(List.of(), scanned());
    // both fragments lost rows: only their deletion files changed, nothing is read again
    assertEquals(frags, diff().deletionsChanged);
    assertEquals(null, writeTasks(), "no write ran");
    assertEquals(0, r.rowsInserted());
    // ids 0..19 and 150, minus those the filter (score = id % 13, score % 5 <> 0) left out
    long expected = java.util.stream.LongStream.concat(
        java.util.stream.LongStream.range(0, 20), java.util.stream.LongStream.of(150))
        .filter(id -> (id % 13) % 5 != 0).count();
    assertEquals(expected, r.rowsDeleted());
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void rowsUpdatedInPlaceAreReprojectedAndUntouchedFragmentsAreNotRead() throws Exception {
    String ns = f.namespace("upd");
    String[] t = viewOver(f, ns, 3, 100);
    List<Integer> before = fragmentIds(ns);
    // same _rowid, newer _row_last_updated_at_version; id 7 leaves the filter (score 5)
    QueryRefreshAtomicityTest.mergeUpdate(location(f, ns, "src"), new long[] {3, 7, 250},
        new int[] {2, 5, 4});
    f.spark.catalog().refreshTable(t[0]);
    RefreshResult r = refresh(ns);
    assertFalse(scanned().contains(before.get(1)),
        "the middle fragment has no updated row: " + scannedOrNull());
    assertFalse(diff().replaced.contains(before.get(1)));
    assertFalse(diff().deletionsChanged.contains(before.get(1)));
    assertSameAsSelect(f, t[0], t[1]);
    assertEquals(List.of("250|UPD250|8", "3|UPD3|4"),
        f.rows("SELECT id, n, s2 FROM " + t[1] + " WHERE id IN (3, 7, 250) ORDER BY id"));
    assertEquals(2, r.rowsInserted());
    assertEquals(3, r.rowsDeleted());
  }

  @Test
  void anUpdateThatLeavesTheFilterDeletesTheRowAndOneThatEntersAddsIt() {
    String ns = f.namespace("flt");
    String[] t = viewOver(f, ns, 2, 100);
    // lance-spark UPDATE: the row gets a new _rowid (delete + insert)
    f.sql("UPDATE " + t[0] + " SET score = 10 WHERE id = 1"); // leaves: 10 % 5 = 0
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id = 5"); // enters: score was 5
    RefreshResult r = refresh(ns);
    assertSameAsSelect(f, t[0], t[1]);
    assertEquals(List.of("5|N5|22"), f.rows("SELECT id, n, s2 FROM " + t[1]
        + " WHERE id IN (1, 5)"));
    assertEquals(1, r.rowsInserted());
    assertEquals(1, r.rowsDeleted());
  }

  @Test
  void compactionMovesRowsWithoutRewritingTheView() throws Exception {
    String ns = f.namespace("cmp");
    String[] t = viewOver(f, ns, 4, 50);
    f.sql("DELETE FROM " + t[0] + " WHERE id BETWEEN 60 AND 64");
    refresh(ns);
    List<String> view = f.rows("SELECT __source_row_id, id, n, s2 FROM " + t[1]);
    compact(ns);
    assertEquals(1, fragmentIds(ns).size(), "compaction merged the fragments");
    RefreshResult r = refresh(ns);
    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(0, r.rowsInserted(), "stable row ids: the rows are the same");
    assertEquals(0, r.rowsDeleted());
    assertEquals(view, f.rows("SELECT __source_row_id, id, n, s2 FROM " + t[1]));
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void appendsUpdatesDeletesAndCompactionInOneRefresh() throws Exception {
    String ns = f.namespace("mix");
    String[] t = viewOver(f, ns, 3, 80);
    insert(f, t[0], 240, 40);
    f.sql("DELETE FROM " + t[0] + " WHERE id % 9 = 0");
    f.sql("UPDATE " + t[0] + " SET score = score + 1 WHERE id BETWEEN 100 AND 110");
    QueryRefreshAtomicityTest.mergeUpdate(location(f, ns, "src"), new long[] {201, 202},
        new int[] {1, 1});
    compact(ns);
    insert(f, t[0], 280, 10);
    refresh(ns);
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void aViewRowWhoseUpdateVersionIsUnknownIsReprojectedNotKept() throws Exception {
    // The write task is fed rows directly, so the NULL case does not depend on how a source
    // gets such rows: [__source_row_id, view columns..., _row_last_updated_at_version]
    String ns = f.namespace("nul");
    viewOver(f, ns, 1, 10);
    String viewUri = location(f, ns, "v");
    org.apache.arrow.vector.types.pojo.Schema plain;
    try (BufferAllocator a = new RootAllocator(); Dataset v = Dataset.open(viewUri, a)) {
      plain = RefreshStart.withoutMetadata(v.getSchema());
    }
    org.apache.spark.sql.types.StructType st =
        org.apache.spark.sql.util.LanceArrowUtils.fromArrowSchema(plain);
    int cols = st.fields().length;
    long watermark = 10;
    // id 1: in the view, not updated since the watermark -> kept; 2: version unknown; 3:
    // updated after the watermark; 4: not in the view
    Long[][] rows = {{1L, 5L}, {2L, null}, {3L, 20L}, {4L, 5L}};
    List<org.apache.spark.sql.catalyst.InternalRow> in = new ArrayList<>();
    for (Long[] r : rows) {
      Object[] values = new Object[cols + 1];
      for (int i = 0; i < cols; i++) {
        org.apache.spark.sql.types.DataType dt = st.fields()[i].dataType();
        values[i] = i == 0 ? (Object) r[0]
            : dt instanceof org.apache.spark.sql.types.StringType
                ? org.apache.spark.unsafe.types.UTF8String.fromString("x")
            : dt instanceof org.apache.spark.sql.types.BooleanType ? (Object) Boolean.TRUE
            : dt instanceof org.apache.spark.sql.types.IntegerType ? (Object) 0
            : (Object) 0L;
      }
      values[cols] = r[1];
      in.add(new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(values));
    }
    ViewTables tables = new ViewTables("v", viewUri, Map.of(), viewUri,
        Map.of());
    WriteTask task = WriteTask.keeping(tables, plain,
        RefreshOptions.DEFAULTS, org.roaringbitmap.longlong.Roaring64NavigableMap.bitmapOf(
            1, 2, 3), watermark, cols);
    List<org.apache.spark.broadcast.Broadcast<byte[]>> b = task.broadcast(
        org.apache.spark.api.java.JavaSparkContext.fromSparkContext(f.spark.sparkContext()));
    WriteTask.Output out;
    try {
      out = task.call(in.iterator()).next();
    } finally {
      b.forEach(org.apache.spark.broadcast.Broadcast::destroy);
    }
    assertEquals(3, out.rows(), "rows 2, 3 and 4 are written");
    assertEquals(org.roaringbitmap.longlong.Roaring64NavigableMap.bitmapOf(1),
        RowIdSet.deserialize(out.kept()));
  }

  @Test
  void changedFragmentsAreWrittenWithTheClusterParallelism() {
    // few rows (far below SparkRefreshWrite.ROWS_PER_TASK) in 3 changed fragments: packing them into one task
    // would run the whole SELECT in one task while the other core idles
    String ns = f.namespace("par");
    String[] t = viewOver(f, ns, 1, 50);
    sparkWritePath();
    List<Integer> before = fragmentIds(ns);
    insert(f, t[0], 50, 30);
    insert(f, t[0], 80, 30);
    insert(f, t[0], 110, 30);
    refresh(ns);
    List<Integer> added = new ArrayList<>(fragmentIds(ns));
    added.removeAll(before);
    assertEquals(added, scanned());
    assertEquals(2, f.spark.sparkContext().defaultParallelism());
    assertEquals(Integer.valueOf(2), writeTasks());
    assertSameAsSelect(f, t[0], t[1]);
    // an explicit concurrency option is honoured first
    insert(f, t[0], 140, 30);
    insert(f, t[0], 170, 30);
    refresh(ns, new RefreshOptions(null, 1, null, null, null, null, null, null, null, false));
    assertEquals(2, scanned().size());
    assertEquals(Integer.valueOf(1), writeTasks());
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void aRebuildWithOneTaskReadsEveryFragment() {
    // one task pulls several lance-spark partitions, from lance-core's writer threads
    String ns = f.namespace("one");
    String[] t = viewOver(f, ns, 3, 40);
    RefreshResult r = f.views().refresh(List.of(ns, "v"), new RefreshOptions(null, 1, null,
        null, null, null, null, null, null, true));
    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(f.sql(String.format(SELECT, t[0])).size(), r.rowsInserted());
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void theRowScanWithoutFragmentDiffGivesTheSameView() {
    String ns = f.namespace("scan");
    String[] t = viewOver(f, ns, 2, 60);
    insert(f, t[0], 120, 30);
    f.sql("DELETE FROM " + t[0] + " WHERE id < 7");
    f.sql("UPDATE " + t[0] + " SET score = 10 WHERE id = 8");
    probes.changedFragmentsOnly(false);
    refresh(ns);
    assertEquals(null, scannedOrNull(), "the row scan ran");
    assertSameAsSelect(f, t[0], t[1]);
  }

  /**
   * A replaced source's fragments and row ids mean nothing next to the old watermark, even with
   * more versions than the old table had: the view is rebuilt from the new table, not diffed.
   */
  @Test
  void aSourceReplacedUnderTheSameNameIsRebuiltNotDiffed() {
    String ns = f.namespace("rep");
    String[] t = viewOver(f, ns, 2, 10);
    refresh(ns);
    f.sql("DROP TABLE " + t[0]);
    f.sql("CREATE TABLE " + t[0] + " (id BIGINT, name STRING, score INT)");
    for (int i = 0; i < 3; i++) {
      insert(f, t[0], 500 + 10L * i, 10); // as many versions as the old table, and more
    }
    assertEquals(RefreshResult.JobStatus.DONE, refresh(ns).status());
    assertEquals(null, scannedOrNull(), "no fragment of the new table was diffed");
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void aRefreshToAVersionOlderThanTheWatermarkFails() {
    String ns = f.namespace("old");
    String[] t = viewOver(f, ns, 1, 20);
    insert(f, t[0], 20, 5);
    refresh(ns);
    long watermark = Long.parseLong(f.sql("DESCRIBE MATERIALIZED VIEW " + t[1]).stream()
        .filter(r -> r.getString(0).startsWith("Last refreshed"))
        .findFirst().orElseThrow().getString(1).trim());
    InvalidOptionException e = assertThrows(InvalidOptionException.class, () -> f.views()
        .refresh(List.of(ns, "v"), new RefreshOptions(watermark - 1, null, null, null, null,
            null, null, null, null, false)));
    assertEquals("src_version " + (watermark - 1) + " is older than the version view "
        + t[1] + " already reflects (" + watermark + "); a view cannot be refreshed "
        + "backwards. Omit src_version or give " + watermark + " or later", e.getMessage());
    assertSameAsSelect(f, t[0], t[1]);
  }
}
