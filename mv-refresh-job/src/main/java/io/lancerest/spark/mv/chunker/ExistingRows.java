package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.rowindex.SourceIdIndexCache;
import io.lancerest.spark.mv.rowindex.ViewRowLookup;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The view rows a refresh deletes (and, under {@code output_limit}, those it keeps), as the
 * driver read them from the view at the read version.
 */
final class ExistingRows {
  /** How the rows were found, for the log. */
  String found = "no view row needed";
  final List<Long> deleteAddresses = new ArrayList<>();
  /** The kept rows: (source row id, child index, row address). */
  final List<long[]> kept = new ArrayList<>();
  final TreeMap<Long, Integer> keptCounts = new TreeMap<>();

  /**
   * Addresses of rows to delete; with {@code keepRest}, also the kept rows. The rows of {@code
   * deleteParents} alone are found by the fragments' ranges and indexes ({@link
   * ViewRowLookup}); the kept rows of a view with an {@code output_limit} are all read.
   */
  static ExistingRows read(ChunkerRun run, long version, Roaring64NavigableMap deleteParents,
      boolean keepRest) {
    ExistingRows out = new ExistingRows();
    if (deleteParents.isEmpty() && !keepRest) {
      return out;
    }
    RefreshContext ctx = run.ctx();
    ViewTables t = run.t();
    if (!keepRest) {
      try (BufferAllocator a = new RootAllocator()) {
        org.lance.Dataset view = run.view(version);
        io.lancerest.spark.mv.rowindex.ViewRows found = new ViewRowLookup(t.view(), ctx.caches().get(SourceIdIndexCache.class,
            SourceIdIndexCache::new), ctx.deletionVectors()).find(view, a, deleteParents);
        ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_READ, found.lookedAt());
        ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_SCANNED, found.scanned());
        for (int i = 0; i < found.size(); i++) {
          out.deleteAddresses.add(found.address(i));
        }
        out.found = found.describe();
        return out;
      } catch (ChunkerRefreshException e) {
        throw e;
      } catch (Exception e) {
        throw new ChunkerRefreshException("Cannot look up the rows to delete in view '"
            + t.viewName() + "' version " + version + ": " + e.getMessage(), e);
      }
    }
    org.lance.Dataset view = run.view(version);
    try (LanceScanner s = view.newScan(new ScanOptions.Builder()
            .columns(List.of(ChunkerLayout.SOURCE_ROW_ID, ChunkerLayout.CHILD_INDEX))
            .withRowAddress(true).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        FieldVector sids = root.getVector(ChunkerLayout.SOURCE_ROW_ID);
        IntVector idx = (IntVector) root.getVector(ChunkerLayout.CHILD_INDEX);
        FieldVector addr = root.getVector("_rowaddr");
        for (int i = 0; i < root.getRowCount(); i++) {
          long sid = ((Number) sids.getObject(i)).longValue();
          long address = ((Number) addr.getObject(i)).longValue();
          if (deleteParents.contains(sid)) {
            out.deleteAddresses.add(address);
          } else {
            out.kept.add(new long[] {sid, idx.get(i), address});
            out.keptCounts.merge(sid, 1, Integer::sum);
          }
        }
      }
      out.found = "every view row read (output_limit)";
    } catch (ChunkerRefreshException e) {
      throw e;
    } catch (Exception e) {
      throw new ChunkerRefreshException("Cannot scan view '" + t.viewName() + "' version "
          + version + " for the rows to delete: " + e.getMessage(), e);
    }
    return out;
  }
}
