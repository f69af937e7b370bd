package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.fragments.LiveRowIds;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.rowindex.SourceIdIndexCache;
import io.lancerest.spark.mv.rowindex.ViewRowLookup;
import io.lancerest.spark.mv.rowindex.ViewRows;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The reads of the fragment-diff path: how the source's fragments changed since the watermark,
 * and which view rows hold the source rows that left the changed ones.
 */
record FragmentDiffRead(RefreshContext ctx, ViewTables t) {
  /**
   * How the source changed between the watermark and the target version ({@link
   * SourceChanges}); {@code diff == null} (with {@code why}) when the two versions cannot be
   * compared (then every row id is compared instead).
   */
  SourceChanges changes(RefreshStart s) {
    long watermark = s.watermark;
    long srcVersion = s.srcVersion;
    ctx.describe("compare source fragments of versions " + watermark + " and " + srcVersion);
    long t0 = System.currentTimeMillis();
    try {
      org.lance.Dataset now = s.datasets.source(srcVersion);
      org.lance.Dataset then;
      try {
        then = s.datasets.source(watermark);
      } catch (MaterializedViewException e) {
        LOG.info("View {} (job {}): source version {} cannot be opened ({}); scanning every "
            + "row", t.viewName(), ctx.jobId(), watermark, e.getMessage());
        return SourceChanges.notComparable("source version " + watermark + " can no longer "
            + "be opened (cleaned up?)", t0);
      }
      SourceChanges ch = SourceChanges.between(then, now, s.sourceAt,
          ctx.caches().get(LiveRowIds.class, LiveRowIds::new), ctx.deletionVectors(),
          "View " + t.viewName() + " (job " + ctx.jobId() + ")");
      ctx.observe(RefreshListener.Probe.ROW_ID_SETS_CACHED, (long) ch.cachedSets);
      return ch;
    } catch (MaterializedViewException e) {
      throw e;
    } catch (Exception e) {
      throw new QueryRefreshException("Cannot compare the fragments of the source of view "
          + t.viewName() + " at versions " + watermark + " and " + srcVersion + ": "
          + e.getMessage(), e);
    }
  }

  /**
   * {@code __source_row_id → _rowaddr} of the view rows whose source row is in {@code ids}
   * ({@link ViewRowLookup}: by the fragments' ranges and source id indexes, reading only the
   * fragments that have none).
   */
  ViewRows viewRowsOf(RefreshStart s, Roaring64NavigableMap ids) {
    long version = s.readVersion;
    ctx.describe("find " + ids.getLongCardinality() + " source rows in the view");
    try (BufferAllocator a = new RootAllocator()) {
      org.lance.Dataset view = s.datasets.view(version);
      ViewRows out = new ViewRowLookup(t.view(),
          ctx.caches().get(SourceIdIndexCache.class, SourceIdIndexCache::new),
          ctx.deletionVectors()).find(view, a, ids);
      ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_READ, out.lookedAt());
      ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_SCANNED, out.scanned());
      return out;
    } catch (QueryRefreshException e) {
      throw e;
    } catch (Exception e) {
      throw new QueryRefreshException("Cannot scan view " + t.viewName() + " at version "
          + version + ": " + e.getMessage(), e);
    }
  }
}
