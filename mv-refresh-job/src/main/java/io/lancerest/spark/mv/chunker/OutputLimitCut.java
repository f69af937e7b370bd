package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.rowindex.SourceIdIndexFiles;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The {@code output_limit} cut of a refresh: keeps the first {@code limit} view rows in (parent,
 * child) order, deleting the existing rows past it and writing the new parents again, capped.
 */
final class OutputLimitCut {
  private OutputLimitCut() {}

  /**
   * The expansion {@code ex} cut at {@code limit}; the existing rows past the cut are added to
   * {@code existing}'s deletions, and the parents cut (re-expanded later) to {@code
   * truncatedOut}.
   */
  static Expansion apply(long limit, Expansion ex, ExistingRows existing, Dataset<Row> source,
      ParentExpander expander, ViewTables t, Roaring64NavigableMap truncatedOut) {
    TreeMap<Long, Integer> perParent = new TreeMap<>(existing.keptCounts);
    ex.counts.forEach((sid, n) -> perParent.merge(sid, n, Integer::sum));
    long acc = 0;
    Long boundary = null;
    int keep = 0;
    for (Map.Entry<Long, Integer> e : perParent.entrySet()) {
      if (acc + e.getValue() <= limit) {
        acc += e.getValue();
        continue;
      }
      boundary = e.getKey();
      keep = (int) (limit - acc);
      break;
    }
    if (boundary == null) {
      return ex;
    }
    final long b = boundary;
    final int k = keep;
    // Existing rows past the cut go; their parents become truncated (re-expanded later).
    for (long[] row : existing.kept) {
      if (row[0] > b || (row[0] == b && row[1] >= k)) {
        existing.deleteAddresses.add(row[2]);
        truncatedOut.addLong(row[0]);
      }
    }
    boolean newRowsCut = false;
    for (Map.Entry<Long, Integer> e : ex.counts.entrySet()) {
      long sid = e.getKey();
      if (e.getValue() > 0 && (sid > b || (sid == b && e.getValue() > k))) {
        truncatedOut.addLong(sid);
        newRowsCut = true;
      }
    }
    if (!newRowsCut) {
      return ex;
    }
    // Some new children fall past the cut: write the new parents again, capped.
    Roaring64NavigableMap again = ParentIds.empty();
    for (long sid : ex.counts.keySet()) {
      if (sid < b || (sid == b && k > 0)) {
        again.addLong(sid);
      }
    }
    Expansion capped = again.isEmpty() ? new Expansion()
        : expander.expand(source, again, false, Map.of(b, k));
    // the first expansion's fragments are never committed: their indexes go now
    SourceIdIndexFiles.drop(t.view(), ex.fragments);
    Expansion out = new Expansion();
    out.fragments.addAll(capped.fragments);
    out.ranges.addAll(capped.ranges);
    out.counts.putAll(ex.counts);
    out.skipped.addAll(ex.skipped);
    return out;
  }
}
