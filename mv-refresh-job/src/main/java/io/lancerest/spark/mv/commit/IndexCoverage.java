package io.lancerest.spark.mv.commit;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.index.Index;

/** Live rows of a view an index's segments cover, those they do not, and how many segments. */
record IndexCoverage(long indexedRows, long unindexedRows, int segments) {
  static IndexCoverage of(Dataset ds, String name) {
    Set<Integer> covered = new HashSet<>();
    int segments = 0;
    for (Index i : ds.getIndexes()) {
      if (i.name().equals(name)) {
        segments++;
        covered.addAll(i.fragments().orElse(List.of()));
      }
    }
    long in = 0;
    long out = 0;
    for (Fragment f : ds.getFragments()) {
      long rows = f.metadata().getNumRows();
      if (covered.contains(f.getId())) {
        in += rows;
      } else {
        out += rows;
      }
    }
    return new IndexCoverage(in, out, segments);
  }

  long liveRows() {
    return indexedRows + unindexedRows;
  }
}
