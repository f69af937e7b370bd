package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryViewTables.SELECT;
import static io.lancerest.spark.mv.query.QueryViewTables.assertSameAsSelect;
import static io.lancerest.spark.mv.query.QueryViewTables.insert;
import static io.lancerest.spark.mv.query.QueryViewTables.location;
import static io.lancerest.spark.mv.query.QueryViewTables.viewOver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.engine.EngineFixture;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.compaction.CompactionOptions;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * The source row id ranges a query view records per fragment, and the view lookup of an
 * incremental refresh that reads only the fragments that can hold the rows it looks for. A
 * wrongly skipped fragment leaves stale or duplicated rows, so every test also checks the view
 * against the SELECT.
 */
class QueryViewRangesTest {
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
  void clear() {
    probes = new Probes();
  }

  /** What the last refresh reported. */
  private static Probes probes = new Probes();

  private static void refresh(String ns) {
    refresh(ns, RefreshOptions.DEFAULTS);
  }

  private static void refresh(String ns, RefreshOptions o) {
    probes = new Probes();
    f.views().refresh(List.of(ns, "v"), o, probes);
  }

  /** The view's recorded entries by fragment id. */
  private static Map<Integer, FragmentSourceRanges.Entry> recorded(String ns) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, "v"), a)) {
      Map<String, String> md = ds.getSchema().getCustomMetadata();
      return FragmentSourceRanges.parse(md == null ? null : md.get(FragmentSourceRanges.KEY));
    }
  }

  /** The view's fragments: id → file tag. */
  private static Map<Integer, String> viewFragments(String ns) {
    Map<Integer, String> out = new TreeMap<>();
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, "v"), a)) {
      for (Fragment fr : ds.getFragments()) {
        out.put(fr.getId(), FragmentSourceRanges.fileTag(fr.metadata()));
      }
    }
    return out;
  }

  /** Source row id → view fragment, over the view's current rows. */
  private static Map<Long, Integer> viewFragmentOf(String ns) {
    Map<Long, Integer> out = new HashMap<>();
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, "v"), a);
        LanceScanner s = ds.newScan(new ScanOptions.Builder()
            .columns(List.of("__source_row_id")).withRowAddress(true).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        BigIntVector sid = (BigIntVector) root.getVector("__source_row_id");
        for (int i = 0; i < root.getRowCount(); i++) {
          long addr = ((Number) root.getVector("_rowaddr").getObject(i)).longValue();
          out.put(sid.get(i), (int) (addr >>> 32));
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  /** {@code {min, max}} source row id of the rows of each view fragment. */
  private static Map<Integer, long[]> actualRanges(String ns) {
    Map<Integer, long[]> actual = new TreeMap<>();
    viewFragmentOf(ns).forEach((sid, frag) -> actual.merge(frag, new long[] {sid, sid},
        (x, y) -> new long[] {Math.min(x[0], y[0]), Math.max(x[1], y[1])}));
    return actual;
  }

  /**
   * Every view fragment has an entry with its file tag and a range holding its rows (deletions
   * leave a fragment's range as it was written).
   */
  private static void assertRangesHoldRows(String ns) {
    Map<Integer, long[]> actual = actualRanges(ns);
    Map<Integer, FragmentSourceRanges.Entry> rec = recorded(ns);
    Map<Integer, String> frags = viewFragments(ns);
    assertEquals(frags.keySet(), rec.keySet(), "an entry for every fragment, and no other");
    actual.forEach((frag, a) -> {
      FragmentSourceRanges.Entry x = rec.get(frag);
      assertEquals(frags.get(frag), x.fileTag());
      assertTrue(x.min() <= a[0] && a[1] <= x.max(), "fragment " + frag + " holds " + a[0]
          + ".." + a[1] + ", recorded " + x);
    });
  }

  /** Every view fragment has an entry with its file tag and exactly the range of its rows. */
  private static void assertExactRanges(String ns) {
    Map<Integer, long[]> actual = actualRanges(ns);
    Map<Integer, FragmentSourceRanges.Entry> rec = recorded(ns);
    Map<Integer, String> frags = viewFragments(ns);
    assertEquals(frags.keySet(), rec.keySet(), "an entry for every fragment, and no other");
    for (Map.Entry<Integer, long[]> e : actual.entrySet()) {
      FragmentSourceRanges.Entry x = rec.get(e.getKey());
      assertEquals(new FragmentSourceRanges.Entry(e.getValue()[0], e.getValue()[1],
          frags.get(e.getKey()), x.indexed()), x, "fragment " + e.getKey());
    }
  }

  /** The source's current _rowid of the rows {@code where} selects. */
  private static List<Long> sourceRowIds(String src, String where) {
    List<Long> out = new ArrayList<>();
    for (Row r : f.sql("SELECT _rowid FROM " + src + " WHERE " + where)) {
      out.add(r.getLong(0));
    }
    return out;
  }

  /** The view fragments that hold the view rows of {@code sourceRowIds}. */
  private static List<Integer> holding(String ns, List<Long> sourceRowIds) {
    Map<Long, Integer> of = viewFragmentOf(ns);
    TreeSet<Integer> out = new TreeSet<>();
    for (long id : sourceRowIds) {
      if (of.containsKey(id)) {
        out.add(of.get(id));
      }
    }
    return new ArrayList<>(out);
  }

  private static List<Integer> read() {
    assertNotNull(probes.get(RefreshListener.Probe.SOURCE_FRAGMENTS_READ), "the fragment-diff path ran");
    assertNotNull(probes.get(RefreshListener.Probe.VIEW_FRAGMENTS_READ), "the view lookup ran");
    return probes.get(RefreshListener.Probe.VIEW_FRAGMENTS_READ);
  }

  @Test
  void fullAndIncrementalRefreshesRecordTheRangeOfEveryFragmentTheyWrite() {
    String ns = f.namespace("rec");
    String[] t = viewOver(f, ns, 3, 100);
    assertTrue(viewFragments(ns).size() >= 2, "several view fragments: " + viewFragments(ns));
    assertExactRanges(ns);
    Map<Integer, FragmentSourceRanges.Entry> before = recorded(ns);
    insert(f, t[0], 300, 40);
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id = 150");
    refresh(ns);
    assertRangesHoldRows(ns);
    Map<Integer, FragmentSourceRanges.Entry> after = recorded(ns);
    // fragments the refresh kept keep their entries as they were
    before.forEach((id, e) -> {
      if (after.containsKey(id)) {
        assertEquals(e, after.get(id), "kept fragment " + id);
      }
    });
    assertTrue(after.size() > before.size(), "the new fragment got an entry");
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void updatesAndDeletesReadOnlyTheViewFragmentsHoldingTheirOldRows() {
    String ns = f.namespace("skip");
    String[] t = viewOver(f, ns, 4, 100);
    int viewFragments = viewFragments(ns).size();
    assertTrue(viewFragments >= 3, "several view fragments: " + viewFragments(ns));
    // lance-spark UPDATE: the old row ids leave the source (deletion), new rows are appended
    List<Long> old = sourceRowIds(t[0], "id BETWEEN 210 AND 214");
    List<Integer> expected = holding(ns, old);
    f.sql("UPDATE " + t[0] + " SET name = concat(name, 'x') WHERE id BETWEEN 210 AND 214");
    refresh(ns);
    assertEquals(expected, read());
    assertTrue(read().size() < viewFragments, "fragments were skipped: " + read());
    assertSameAsSelect(f, t[0], t[1]);
    assertEquals(List.of("210|N210X|4", "211|N211X|6"), f.rows("SELECT id, n, s2 FROM " + t[1]
        + " WHERE id IN (210, 211) ORDER BY id"));

    // deletes and updates in the first and last source fragments, and in the rows the last
    // refresh wrote
    old = sourceRowIds(t[0], "id < 3 OR id BETWEEN 390 AND 392 OR id = 211");
    expected = holding(ns, old);
    assertTrue(expected.size() >= 3, expected.toString());
    f.sql("DELETE FROM " + t[0] + " WHERE id < 3");
    f.sql("UPDATE " + t[0] + " SET score = 12 WHERE id BETWEEN 390 AND 392 OR id = 211");
    refresh(ns);
    assertEquals(expected, read());
    assertSameAsSelect(f, t[0], t[1]);
    assertRangesHoldRows(ns);
  }

  private static List<Integer> scanned() {
    assertNotNull(probes.get(RefreshListener.Probe.VIEW_FRAGMENTS_SCANNED), "the view lookup ran");
    return probes.get(RefreshListener.Probe.VIEW_FRAGMENTS_SCANNED);
  }

  @Test
  void changesSpreadOverEveryFragmentAreFoundThroughTheIndexesWithoutReadingTheView() {
    String ns = f.namespace("idx");
    String[] t = viewOver(f, ns, 4, 100);
    Map<Integer, FragmentSourceRanges.Entry> rec = recorded(ns);
    assertTrue(rec.size() >= 3 && rec.values().stream().allMatch(
        FragmentSourceRanges.Entry::indexed), "every fragment the rebuild wrote is indexed: "
        + rec);
    // rows leave every fragment: lance-spark UPDATE (new row ids) and DELETE
    List<Long> old = sourceRowIds(t[0], "id % 7 = 1 OR id % 11 = 2");
    f.sql("UPDATE " + t[0] + " SET name = concat(name, 'y') WHERE id % 7 = 1");
    f.sql("DELETE FROM " + t[0] + " WHERE id % 11 = 2");
    refresh(ns);
    assertEquals(holding(ns, old).size(), 0, "their view rows are gone");
    assertEquals(new ArrayList<>(rec.keySet()), read(), "every fragment held some");
    assertEquals(List.of(), scanned(), "none was read");
    assertSameAsSelect(f, t[0], t[1]);
    // again: the rows the last refresh wrote are found through that fragment's own index
    f.sql("UPDATE " + t[0] + " SET name = concat(name, 'z') WHERE id % 7 = 1");
    refresh(ns);
    assertEquals(List.of(), scanned());
    assertSameAsSelect(f, t[0], t[1]);
    assertEquals(List.of("8|N8YZ"), f.rows("SELECT id, n FROM " + t[1] + " WHERE id = 8"));
  }

  @Test
  void aRowChangedInPlaceTwiceIsDeletedWhereItIsLiveAndNotAgainWhereItWasReplaced()
      throws Exception {
    String ns = f.namespace("twice");
    String[] t = viewOver(f, ns, 3, 100);
    // merge_insert keeps the row id: the view row is replaced in a new fragment, the old one
    // is deleted but stays in its fragment's index
    QueryRefreshAtomicityTest.mergeUpdate(location(f, ns, "src"), new long[] {3, 150},
        new int[] {2, 4});
    f.spark.catalog().refreshTable(t[0]);
    RefreshResult first = f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS, probes);
    assertEquals(2, first.rowsDeleted());
    QueryRefreshAtomicityTest.mergeUpdate(location(f, ns, "src"), new long[] {3, 150},
        new int[] {6, 8});
    f.spark.catalog().refreshTable(t[0]);
    assertEquals(2L, f.views().explainRefresh(List.of(ns, "v"), RefreshOptions.DEFAULTS)
        .viewRowsToDelete(), "the replaced rows of 3 and 150 are not counted again");
    probes = new Probes();
    RefreshResult second = f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS, probes);
    assertEquals(List.of(), scanned());
    assertEquals(2, second.rowsDeleted(), "the live rows only");
    assertEquals(2, second.rowsInserted());
    assertSameAsSelect(f, t[0], t[1]);
    assertEquals(List.of("150|UPD150|16", "3|UPD3|12"), f.rows("SELECT id, n, s2 FROM "
        + t[1] + " WHERE id IN (3, 150) ORDER BY id"));
  }

  @Test
  void aCompactionIndexesWhatItWritesAndRemovesTheIndexesOfWhatItReplaced() throws Exception {
    String ns = f.namespace("cidx");
    String[] t = viewOver(f, ns, 2, 100);
    for (int i = 0; i < 4; i++) {
      insert(f, t[0], 300 + 10 * i, 10);
      refresh(ns);
    }
    assertTrue(viewFragments(ns).size() >= 5, viewFragments(ns).toString());
    assertEquals(QueryViewTables.indexedFragments(f, ns), QueryViewTables.indexFolders(f, ns));
    f.views().optimize(List.of(ns, "v"));
    f.spark.catalog().refreshTable(t[1]);
    assertTrue(recorded(ns).values().stream().allMatch(FragmentSourceRanges.Entry::indexed),
        "the compacted fragments are indexed: " + recorded(ns));
    assertEquals(QueryViewTables.indexedFragments(f, ns), QueryViewTables.indexFolders(f, ns),
        "only the current fragments' indexes are left");
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id % 10 = 3");
    refresh(ns);
    assertEquals(List.of(), scanned());
    assertSameAsSelect(f, t[0], t[1]);
    // a rebuild drops every index of the fragments it replaces
    f.views().refresh(List.of(ns, "v"), new RefreshOptions(null, null, null, null, null, null,
        null, null, null, true));
    assertEquals(QueryViewTables.indexedFragments(f, ns), QueryViewTables.indexFolders(f, ns));
  }

  @Test
  void fragmentsWhoseIndexIsMissingAreRead() throws Exception {
    String ns = f.namespace("noidx");
    String[] t = viewOver(f, ns, 3, 100);
    Map<Integer, String> frags = viewFragments(ns);
    // the indexes are lost (a copy of the table without its _mv folder, say)
    try (var files = java.nio.file.Files.walk(java.nio.file.Path.of(java.net.URI.create(
        location(f, ns, "v").startsWith("file:") ? location(f, ns, "v")
            : "file://" + location(f, ns, "v"))).resolve("_mv"))) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id % 9 = 4");
    refresh(ns);
    assertEquals(new ArrayList<>(frags.keySet()), scanned(), "every fragment is read");
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void aViewWithoutRangesIsReadWholeAndGainsThemForWhatItWrites() {
    String ns = f.namespace("old");
    String[] t = viewOver(f, ns, 3, 100);
    // a view from before ranges were recorded: strip the key
    String view = location(f, ns, "v");
    long version;
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      version = ds.version();
    }
    Map<String, String> strip = new HashMap<>();
    strip.put(FragmentSourceRanges.KEY, null);
    ViewCommit.builder(view, version).schemaMetadata(strip).build().commit();
    f.spark.catalog().refreshTable(t[1]);
    assertEquals(Map.of(), recorded(ns));
    Map<Integer, String> old = viewFragments(ns);

    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id = 5");
    refresh(ns);
    assertEquals(new ArrayList<>(old.keySet()), read(), "every fragment is read");
    assertEquals(read(), scanned(), "without entries no index is known");
    assertSameAsSelect(f, t[0], t[1]);
    // the refresh recorded its own fragment, and none of the old ones
    Map<Integer, FragmentSourceRanges.Entry> rec = recorded(ns);
    assertEquals(1, rec.size(), rec.toString());
    assertTrue(!old.containsKey(rec.keySet().iterator().next()));

    // the next lookup reads the old fragments (no range) but skips the new one when its range
    // does not hold the departed rows
    int fresh = rec.keySet().iterator().next();
    f.sql("UPDATE " + t[0] + " SET score = 12 WHERE id = 250");
    refresh(ns);
    List<Integer> oldStill = new ArrayList<>(viewFragments(ns).keySet());
    oldStill.retainAll(old.keySet());
    assertEquals(oldStill, read());
    assertTrue(!read().contains(fresh));
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void fragmentsRewrittenByACompactionOfTheViewAreRead() {
    String ns = f.namespace("cmp");
    String[] t = viewOver(f, ns, 3, 60);
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id = 70");
    refresh(ns);
    // a compaction of the view table: its fragments are rewritten under new ids, the metadata
    // with the old entries stays
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location(f, ns, "v"), a)) {
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true).build());
    }
    f.spark.catalog().refreshTable(t[1]);
    Map<Integer, String> compacted = viewFragments(ns);
    assertTrue(recorded(ns).keySet().stream().noneMatch(compacted::containsKey),
        "compaction made new fragments: " + compacted + " vs " + recorded(ns).keySet());
    f.sql("UPDATE " + t[0] + " SET score = 12 WHERE id = 10");
    f.sql("DELETE FROM " + t[0] + " WHERE id = 130");
    refresh(ns);
    assertEquals(new ArrayList<>(compacted.keySet()), read());
    assertSameAsSelect(f, t[0], t[1]);
    // the old entries are gone with their fragments; what this refresh wrote has one
    Map<Integer, String> now = viewFragments(ns);
    assertTrue(now.keySet().containsAll(recorded(ns).keySet()), recorded(ns).toString());
  }

  @Test
  void aForcedRefreshRecordsOnlyItsOwnFragments() {
    String ns = f.namespace("frc");
    String[] t = viewOver(f, ns, 2, 100);
    insert(f, t[0], 200, 30);
    refresh(ns);
    Map<Integer, FragmentSourceRanges.Entry> before = recorded(ns);
    f.views().refresh(List.of(ns, "v"), new RefreshOptions(null, null, null, null, null, null,
        null, null, null, true));
    Map<Integer, FragmentSourceRanges.Entry> after = recorded(ns);
    assertTrue(after.keySet().stream().noneMatch(before::containsKey),
        "no entry of the replaced fragments: " + before.keySet() + " / " + after.keySet());
    assertExactRanges(ns);
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void manySmallFragmentsPerTaskStillGetRangesHoldingTheirRows() {
    // max_rows_per_fragment splits each task's output into several fragments: the ranges are
    // per batch, so each fragment's range must at least hold its rows
    String ns = f.namespace("max");
    String[] t = viewOver(f, ns, 2, 12000);
    f.views().refresh(List.of(ns, "v"), new RefreshOptions(null, 1, 5000, null, null, null,
        null, null, null, true));
    Map<Integer, long[]> actual = actualRanges(ns);
    Map<Integer, FragmentSourceRanges.Entry> rec = recorded(ns);
    assertTrue(actual.size() >= 4, "several fragments: " + actual.keySet());
    assertEquals(actual.keySet(), rec.keySet());
    actual.forEach((frag, a) -> assertTrue(rec.get(frag).min() <= a[0]
        && a[1] <= rec.get(frag).max(), "fragment " + frag + ": " + rec.get(frag)));
    // an update of the last rows must not need the fragments of the first ones
    List<Long> old = sourceRowIds(t[0], "id BETWEEN 23990 AND 23999");
    List<Integer> expected = holding(ns, old);
    f.sql("UPDATE " + t[0] + " SET score = 11 WHERE id BETWEEN 23990 AND 23999");
    refresh(ns);
    assertTrue(read().containsAll(expected), read() + " / " + expected);
    assertTrue(read().size() < actual.size(), "some fragments were skipped: " + read());
    assertSameAsSelect(f, t[0], t[1]);
  }

  @Test
  void nothingIsReadWhenNoFragmentCanHoldTheRows() {
    String ns = f.namespace("none");
    String[] t = viewOver(f, ns, 2, 50);
    assertTrue(viewFragments(ns).size() >= 2, "several view fragments: " + viewFragments(ns));
    // id 49 (score 10) is filtered out, and lies between the rows of the first source
    // fragment in the view (up to id 48) and those of the second (from id 50)
    List<Long> gone = sourceRowIds(t[0], "id = 49");
    assertEquals(List.of(), holding(ns, gone));
    f.sql("DELETE FROM " + t[0] + " WHERE id = 49");
    refresh(ns);
    assertEquals(List.of(), read());
    assertSameAsSelect(f, t[0], t[1]);
  }
}
