package io.lancerest.spark.mv.fragments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.compaction.CompactionOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * {@link FragmentDiff#departed} gives the row ids that left changed fragments, the same as
 * scanning both versions of every such fragment: when it reads the deletion files directly (no
 * scan at all on a local dataset), and when it cannot and scans instead (as on an object store),
 * also then reading what it can from the row-id sequence.
 */
class FragmentDiffDepartedTest {
  private static BufferAllocator a;
  /** One cache across the diffs of a test, as across the refreshes of one catalog. */
  private final LiveRowIds cache = new LiveRowIds();
  /** What a store whose deletion files cannot be read directly gives: nothing, so scans. */
  private static final DeletionVectors.Reader SCANS = (uri, f) -> f.getDeletionFile() == null
      ? new org.roaringbitmap.RoaringBitmap() : null;
  @TempDir Path dir;

  @BeforeAll
  static void open() {
    a = new RootAllocator();
  }

  @AfterAll
  static void close() {
    a.close();
  }

  private String table() {
    String uri = dir.resolve("t.lance").toString();
    IdTables.create(a, uri);
    append(uri, 0, 300);
    append(uri, 300, 500);
    return uri;
  }

  private static void append(String uri, long from, long to) {
    IdTables.append(a, uri, from, to);
  }

  private static long latest(String uri) {
    return IdTables.latest(a, uri);
  }

  private static Dataset at(String uri, long version) {
    return IdTables.at(a, uri, version);
  }

  /**
   * departed() against the plain two-scan computation between two versions, reading the
   * deletion files (and then scanning nothing); returns what it gives when it has to scan.
   */
  private FragmentDiff.Departed check(String uri, long from, long to) throws Exception {
    FragmentDiff.Departed direct = check(uri, from, to, DeletionVectors.DIRECT);
    assertEquals(0, direct.fragmentsScanned(), "a local dataset's deletion files are read");
    assertEquals(0, direct.cachedSets());
    FragmentDiff.Departed scanned = check(uri, from, to, SCANS);
    assertEquals(scanned.rescanAgain(), direct.rescanAgain());
    assertEquals(scanned.rescanAgainRows(), direct.rescanAgainRows());
    return scanned;
  }

  private FragmentDiff.Departed check(String uri, long from, long to,
      DeletionVectors.Reader deletions) throws Exception {
    try (Dataset then = at(uri, from); Dataset now = at(uri, to)) {
      FragmentDiff d = FragmentDiff.between(FragmentDiff.metadata(then.getFragments()),
          FragmentDiff.metadata(now.getFragments()));
      Roaring64NavigableMap expected = FragmentDiff.rowIds(then, d.replaced);
      for (int f : d.deletionsChanged) {
        Roaring64NavigableMap before = FragmentDiff.rowIds(then, List.of(f));
        Roaring64NavigableMap after = FragmentDiff.rowIds(now, List.of(f));
        Roaring64NavigableMap back = new Roaring64NavigableMap();
        back.or(after);
        back.andNot(before);
        if (back.isEmpty()) {
          before.andNot(after);
        }
        expected.or(before);
      }
      FragmentDiff.Departed got = d.departed(then, now, cache, deletions);
      assertEquals(expected, got.ids());
      return got;
    }
  }

  @Test
  void deletionsInFragmentsWithAndWithoutEarlierDeletions() throws Exception {
    String uri = table();
    long v0 = latest(uri);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id % 7 = 3"); // both fragments, none had deletions
    }
    long v1 = latest(uri);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id BETWEEN 100 AND 120 OR id = 450"); // both had deletions
    }
    long v2 = latest(uri);
    cache.clear();
    FragmentDiff.Departed first = check(uri, v0, v1);
    assertEquals(0, first.cachedSets(), "v0 had no deletions: its ids come from the sequences");
    assertEquals(java.util.stream.LongStream.range(0, 500).filter(i -> i % 7 == 3).count(),
        first.ids().getLongCardinality());
    assertEquals(List.of(), first.rescanAgain());
    FragmentDiff.Departed second = check(uri, v1, v2);
    assertEquals(List.of(), second.rescanAgain());
    // v1's live ids of both fragments were scanned as the newer side of the first diff
    assertEquals(2, second.cachedSets());
    assertEquals(List.of(), check(uri, v0, v2).rescanAgain());
    // the older version's deletions come back with a restore: that fragment is read again
    try (Dataset old = at(uri, v1)) {
      old.restore();
    }
    FragmentDiff.Departed restored = check(uri, v2, latest(uri));
    assertEquals(2, restored.rescanAgain().size(), restored.toString());
    assertEquals(500, restored.rescanAgainRows(), "both fragments' physical rows: 300 + 200");
    assertEquals(0, first.rescanAgainRows());
  }

  @Test
  void fragmentsReplacedByACompaction() throws Exception {
    String uri = table();
    long v0 = latest(uri);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id = 7");
    }
    long v1 = latest(uri);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true).build());
    }
    long v2 = latest(uri);
    // fragment 1 had no deletions at v0: its ids come from its row-id sequence
    assertEquals(499, check(uri, v1, v2).ids().getLongCardinality());
    assertEquals(500, check(uri, v0, v2).ids().getLongCardinality());
  }

  @Test
  void theRowIdSequenceOfAFreshFragmentIsItsRange() throws Exception {
    String uri = table();
    try (Dataset ds = Dataset.open(uri, a)) {
      for (Fragment f : ds.getFragments()) {
        Roaring64NavigableMap all = FragmentDiff.allRowIds(f.metadata());
        assertNotNull(all, f.metadata().toString());
        assertEquals(FragmentDiff.rowIds(ds, List.of(f.getId())), all);
      }
      ds.delete("id = 1");
    }
    try (Dataset ds = Dataset.open(uri, a)) {
      assertNull(FragmentDiff.allRowIds(ds.getFragments().get(0).metadata()),
          "a fragment with deletions needs a scan");
    }
  }
}
