package io.lancerest.spark.mv.rowindex;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.mv.fragments.DeletionVectors;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Finds the view rows of some source rows (the rows a refresh deletes), reading as little of
 * the view as it can: only fragments whose recorded range ({@link FragmentSourceRanges}) holds a
 * wanted id are looked at; of those, an indexed one is answered by its {@link SourceIdIndex}
 * without reading it, and only the others have their {@code __source_row_id} read. Under updates
 * spread over a table every fragment's range holds some wanted id, so the index is what keeps
 * the lookup's cost with the change rather than with the view.
 *
 * <p>An index knows every physical row, deleted ones too. A source row whose view row was
 * replaced keeps a deleted row in an older fragment; the view's deletion files tell those apart
 * where they can be read ({@link DeletionVectors}). Where they cannot, a deleted row is returned
 * too: deleting it again changes nothing, and the commit counts what it removed.
 */
public final class ViewRowLookup {
  /** More runs of ids than this and a scan filters by an IN list. */
  private static final int MAX_PUSHED_RUNS = 64;

  private final LanceLocation table;
  private final SourceIdIndexCache cache;
  private final DeletionVectors.Reader deletions;

  /**
   * @param cache the indexes kept for the next refresh of the same catalog
   * @param deletions how the view's deletion files are read
   */
  public ViewRowLookup(LanceLocation view, SourceIdIndexCache cache,
      DeletionVectors.Reader deletions) {
    this.table = view;
    this.cache = cache;
    this.deletions = deletions;
  }

  /** The rows of {@code view} (open at the version the refresh reads) of source rows {@code ids}. */
  public ViewRows find(org.lance.Dataset view, BufferAllocator a, Roaring64NavigableMap ids)
      throws Exception {
    ViewRows out = new ViewRows();
    List<FragmentMetadata> all = new ArrayList<>();
    for (Fragment f : view.getFragments()) {
      all.add(f.metadata());
    }
    out.fragments = all.size();
    if (ids.isEmpty()) {
      return out;
    }
    Map<String, String> md = view.getSchema().getCustomMetadata();
    String value = md == null ? null : md.get(FragmentSourceRanges.KEY);
    Map<Integer, FragmentSourceRanges.Entry> entries = FragmentSourceRanges.parse(value);
    List<Integer> lookedAt = FragmentSourceRanges.fragmentsHolding(all, value, ids);
    Map<Integer, FragmentMetadata> byId = new java.util.HashMap<>();
    all.forEach(f -> byId.put(f.getId(), f));
    SourceIdIndex.Wanted wanted = SourceIdIndex.Wanted.of(ids);
    List<Integer> indexed = new ArrayList<>();
    List<Integer> scan = new ArrayList<>();
    for (int id : lookedAt) {
      FragmentMetadata f = byId.get(id);
      FragmentSourceRanges.Entry e = FragmentSourceRanges.valid(entries, f);
      SourceIdIndex index = e == null || !e.indexed() ? null : cache.get(table.uri(), f,
          () -> SourceIdIndexFiles.read(table, a, f));
      if (index == null) {
        scan.add(id);
        continue;
      }
      indexed.add(id);
      addIndexed(out, f, index, wanted);
    }
    out.lookedAt = List.copyOf(lookedAt);
    out.indexed = List.copyOf(indexed);
    out.scanned = List.copyOf(scan);
    if (!scan.isEmpty()) {
      // the filter only narrows the scan: every row read is checked against ids
      String filter = IdRuns.filter(GenevaLayout.SOURCE_ROW_ID, ids, MAX_PUSHED_RUNS);
      SafeLanceScan.scan(view, SafeLanceScan.Request.of(scan.size() < all.size() ? scan : null,
          List.of(GenevaLayout.SOURCE_ROW_ID)).withFilter(filter).withRowAddresses(), b -> {
            BigIntVector sid = (BigIntVector) b.column(GenevaLayout.SOURCE_ROW_ID);
            for (int i = 0; i < b.rowCount(); i++) {
              long id = sid.get(i);
              if (ids.contains(id)) {
                out.add(id, b.rowAddress(i));
              }
            }
          });
    }
    return out;
  }

  /** The live rows of {@code f} holding an id of {@code wanted}. */
  private void addIndexed(ViewRows out, FragmentMetadata f, SourceIdIndex index,
      SourceIdIndex.Wanted wanted) throws Exception {
    long base = (long) f.getId() << 32;
    RoaringBitmap[] deleted = {null};
    boolean[] read = {f.getDeletionFile() == null};
    index.hits(wanted, (id, first, end) -> {
      if (!read[0]) {
        deleted[0] = deletions.read(table.uri(), f); // only for a fragment that holds some
        read[0] = true;
      }
      for (long r = first; r < end; r++) {
        if (deleted[0] == null || !deleted[0].contains((int) r)) {
          out.add(id, base | r);
        }
      }
    });
  }
}
