package io.lancerest.spark.connector.read;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.fragment.DeletionFile;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * Rows of one version of a dataset fetched by their physical place (fragment, offset): the
 * linear route of lance-core 4.0.0, a fetch by position with no filter and no {@code _rowid}
 * (which a rewritten fragment computes in quadratic time, see the package).
 *
 * <p>lance-core's {@code Dataset.take} numbers the live rows of the version across its
 * fragments in manifest order; a row's number is the live rows of the fragments before it plus
 * its own rank among its fragment's live rows, which the fragment's deletion vector at that
 * version tells. The caller reads the deletion vectors (it knows where they are cached).
 */
public final class SafeLanceTake {
  /** Rows asked of lance-core at once. */
  private static final int CHUNK = 65_536;

  private SafeLanceTake() {}

  /**
   * Fetches {@code columns} of the rows at {@code offsets} (fragment id → physical offsets, each
   * live at this version) and hands each Arrow batch to {@code batches} (valid only during the
   * call).
   *
   * @param deleted fragment id → its deletion vector at this version, for every fragment of
   *     {@code offsets} that has a deletion file
   * @return the rows fetched
   * @throws IllegalArgumentException when an offset is not a live row of its fragment, or a
   *     fragment is not in the version
   */
  public static long take(org.lance.Dataset ds, Map<Integer, RoaringBitmap> offsets,
      Map<Integer, RoaringBitmap> deleted, List<String> columns,
      Consumer<VectorSchemaRoot> batches) throws Exception {
    List<Long> indices = new ArrayList<>();
    long before = 0;
    int found = 0;
    for (Fragment f : ds.getFragments()) {
      FragmentMetadata m = f.metadata();
      DeletionFile df = m.getDeletionFile();
      long live = m.getPhysicalRows() - m.getNumDeletions();
      RoaringBitmap wanted = offsets.get(m.getId());
      if (wanted != null) {
        found++;
        RoaringBitmap gone = df == null ? new RoaringBitmap() : deleted.get(m.getId());
        if (gone == null) {
          throw new IllegalArgumentException("no deletion vector given for fragment "
              + m.getId());
        }
        for (IntIterator it = wanted.getIntIterator(); it.hasNext(); ) {
          int p = it.next();
          if (p < 0 || p >= m.getPhysicalRows() || gone.contains(p)) {
            throw new IllegalArgumentException("offset " + p + " is not a live row of fragment "
                + m.getId() + " at version " + ds.version());
          }
          long rank = p - (p == 0 ? 0 : gone.rank(p - 1));
          indices.add(before + rank);
        }
      }
      before += live;
    }
    if (before != ds.countRows()) {
      // the numbering would be off: a deletion file that does not say how many rows it holds
      throw new IllegalStateException("the fragments of version " + ds.version() + " hold "
          + before + " live rows by their metadata, the version counts " + ds.countRows());
    }
    if (found != offsets.size()) {
      throw new IllegalArgumentException("fragments " + offsets.keySet() + " are not all in "
          + "version " + ds.version());
    }
    long rows = 0;
    for (int from = 0; from < indices.size(); from += CHUNK) {
      List<Long> chunk = indices.subList(from, Math.min(indices.size(), from + CHUNK));
      try (ArrowReader r = ds.take(new ArrayList<>(chunk), columns)) {
        while (r.loadNextBatch()) {
          VectorSchemaRoot root = r.getVectorSchemaRoot();
          rows += root.getRowCount();
          batches.accept(root);
        }
      }
    }
    if (rows != indices.size()) {
      throw new IllegalStateException("lance-core gave " + rows + " rows for " + indices.size()
          + " positions of version " + ds.version());
    }
    return rows;
  }
}
