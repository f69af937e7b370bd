package io.lancerest.spark.connector.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.testing.ChildJvm;
import io.lancerest.testing.LanceStates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * lance-core 4.0.0's scans that never end in practice, stated as they are today, each in a JVM
 * of its own under a bounded wait (docs/lance-core-scan-defect.md).
 *
 * <p>On one fragment of {@value #ROWS} rows with stable row ids, the scans below take time
 * quadratic in the fragment's rows (hours here), and the same scans asked for {@code _rowaddr},
 * or on a dataset without stable row ids, take milliseconds. When a lance-core upgrade fixes the
 * defect, {@link #theQuadraticScansDoNotFinish} fails and says which scan now finishes: the
 * guards of {@link FragmentHazard} can then be revisited.
 */
@Tag("slow")
class LanceCoreScanDefectTest {
  static final int ROWS = 200_000;
  /** A linear scan of these datasets takes well under a second; the quadratic one hours. */
  private static final Duration HANG = Duration.ofSeconds(10);
  private static final Duration LINEAR = Duration.ofSeconds(60);

  @TempDir static Path dir;
  static String deletions;
  static String rewritten;
  static String plainIds;

  @BeforeAll
  static void datasets() {
    deletions = LanceStates.withDeletions(dir.resolve("deletions.lance").toString(), ROWS);
    rewritten = LanceStates.rewritten(dir.resolve("rewritten.lance").toString(), ROWS);
    plainIds = dir.resolve("plain.lance").toString();
    LanceStates.write(plainIds, 0, ROWS, false, true);
    LanceStates.delete(plainIds, "id % 1000 = 7");
  }

  private record Probe(String what, String uri, String filter, String columns, long rows) {
    ChildJvm start() {
      return ChildJvm.start(what, ScanProbe.class, List.of("-Xmx512m"), uri, filter, columns);
    }
  }

  @Test
  void theQuadraticScansDoNotFinish() {
    long live = ROWS - ROWS / 1000;
    List<Probe> probes = List.of(
        new Probe("a filtered scan of a late-read column (name) of a fragment with deletions",
            deletions, "id IS NOT NULL", "id,name", live),
        new Probe("_rowid of a fragment a compaction rewrote", rewritten, "-", "id,_rowid",
            live),
        new Probe("a filtered scan of only the filter column of a fragment a compaction "
            + "rewrote", rewritten, "k = 8", "k", ROWS / 1000));
    List<ChildJvm> children = new ArrayList<>();
    try {
      for (Probe p : probes) {
        children.add(p.start()); // in parallel: each only has to outlast the wait
      }
      for (int i = 0; i < probes.size(); i++) {
        ChildJvm.Result r = children.get(i).await(HANG);
        assertFalse(r.finished(), "lance-core finished " + probes.get(i).what() + " in "
            + r.elapsed().toMillis() + " ms (" + r.output().strip() + "): the quadratic scan "
            + "of lance-core 4.0.0 looks fixed in this lance-core; review FragmentHazard and "
            + "docs/lance-core-scan-defect.md");
      }
    } finally {
      children.forEach(ChildJvm::close);
    }
  }

  @Test
  void theSafeRoutesAreLinear() {
    long live = ROWS - ROWS / 1000;
    List<Probe> probes = List.of(
        new Probe("the same filtered scan with _rowaddr", deletions, "id IS NOT NULL",
            "id,name,_rowaddr", live),
        new Probe("_rowid of a fragment with deletions, unfiltered", deletions, "-",
            "id,name,_rowid", live),
        new Probe("the filtered scan without stable row ids", plainIds, "id IS NOT NULL",
            "id,name", live),
        new Probe("a rewritten fragment unfiltered, with _rowaddr and without _rowid",
            rewritten, "-", "id,name,_rowaddr", live));
    for (Probe p : probes) {
      try (ChildJvm child = p.start()) {
        String out = child.awaitSuccess(LINEAR);
        assertTrue(out.contains("ROWS " + p.rows() + " "), p.what() + ": " + out);
      }
    }
  }

  @Test
  void theDatasetsAreInTheStatesTheyAreNamedFor() {
    assertEquals(FragmentHazard.DELETIONS, hazard(deletions));
    assertEquals(FragmentHazard.REWRITTEN_ROW_IDS, hazard(rewritten));
    assertEquals(FragmentHazard.NONE, hazard(plainIds));
  }

  private static FragmentHazard hazard(String uri) {
    try (var a = new org.apache.arrow.memory.RootAllocator();
        var ds = org.lance.Dataset.open(uri, a)) {
      assertEquals(1, ds.getFragments().size(), uri);
      return FragmentHazard.of(ds.getFragments().get(0).metadata());
    }
  }
}
