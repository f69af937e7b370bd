package io.lancerest.spark.mv.fragments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.compaction.CompactionOptions;

/**
 * The fragment diff built from what the commits touched compares only those fragments, and
 * says exactly what comparing every fragment of both versions says; when the commits cannot
 * tell (a restore), there is none and every fragment is compared.
 */
class FragmentDiffTouchedTest {
  private static BufferAllocator a;
  @TempDir Path dir;

  @BeforeAll
  static void open() {
    a = new RootAllocator();
  }

  @AfterAll
  static void close() {
    a.close();
  }

  private static void append(String uri, long from, long to) {
    IdTables.append(a, uri, from, to);
  }

  private static Dataset at(String uri, long version) {
    return IdTables.at(a, uri, version);
  }

  private static long latest(String uri) {
    return IdTables.latest(a, uri);
  }

  private static String describe(FragmentDiff d) {
    return new TreeSet<>(d.rescan) + " " + new TreeSet<>(d.replaced) + " "
        + new TreeSet<>(d.deletionsChanged) + " " + d.rescanRows + " " + d.fragmentsNow;
  }

  /** From every version to every later one, the touched diff equals the listing diff. */
  private static void checkAllPairs(String uri, long first, long last) {
    for (long from = first; from < last; from++) {
      for (long to = from + 1; to <= last; to++) {
        try (Dataset then = at(uri, from); Dataset now = at(uri, to)) {
          List<FragmentMetadata> nowFragments = FragmentDiff.metadata(now.getFragments());
          SourceHistory h = SourceHistory.after(now, from, nowFragments, DeletionVectors.DIRECT);
          assertNotNull(h.touched(), from + " -> " + to + ": " + h);
          FragmentDiff touched = FragmentDiff.touched(then, nowFragments, h.touched());
          assertNotNull(touched, from + " -> " + to);
          FragmentDiff listed = FragmentDiff.between(FragmentDiff.metadata(then.getFragments()),
              nowFragments);
          assertEquals(describe(listed), describe(touched), from + " -> " + to);
        }
      }
    }
  }

  @Test
  void appendsDeletesUpdatesAndCompactions() {
    String uri = dir.resolve("t.lance").toString();
    IdTables.create(a, uri);
    append(uri, 0, 300);
    long first = latest(uri);
    append(uri, 300, 500);
    append(uri, 500, 520);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id % 7 = 3"); // every fragment gains deletions
    }
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id >= 500"); // the last fragment loses every row
    }
    append(uri, 600, 610);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true).build());
    }
    append(uri, 700, 705);
    checkAllPairs(uri, first, latest(uri));
  }

  @Test
  void aRestoreCannotBeToldFromTheCommits() {
    String uri = dir.resolve("r.lance").toString();
    IdTables.create(a, uri);
    append(uri, 0, 100);
    long v = latest(uri);
    append(uri, 100, 200);
    try (Dataset old = at(uri, v)) {
      old.restore();
    }
    try (Dataset then = at(uri, v); Dataset now = Dataset.open(uri, a)) {
      SourceHistory h = SourceHistory.after(now, v, FragmentDiff.metadata(now.getFragments()),
          DeletionVectors.DIRECT);
      assertNull(h.touched(), h.toString());
    }
  }
}
