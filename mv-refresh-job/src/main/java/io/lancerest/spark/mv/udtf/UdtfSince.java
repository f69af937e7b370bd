package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.refresh.SourceVersions;
import io.lancerest.spark.mv.refresh.ViewTables;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a refresh that is not up to date learned about the source since the view's base version.
 *
 * @param removed a cleanup removed the base version ({@link SourceVersions#removedByCleanup})
 * @param unchanged the commits since changed no row (compactions, index and config commits):
 *     no partition needs computing ({@code null} when they did, or were not looked at)
 */
record UdtfSince(String removed, SourceHistory unchanged) {
  static final UdtfSince NOTHING = new UdtfSince(null, null);

  // The refresh's own log category: these lines are steps of one UDTF refresh.
  private static final Logger LOG = LoggerFactory.getLogger(UdtfRefresh.class);

  /**
   * Whether the source's commits since the base version changed no row (compactions), and
   * whether that version is gone. The first only for a view the last refresh left complete (a
   * PARTIAL one is rebuilt to try its skipped partitions again), not partitioned by a vector
   * index (a compaction remaps the index, which decides the partitions), over a source with
   * stable row ids. It assumes, as the rest of the engine does, that a function's output does
   * not depend on the order its rows arrive in.
   */
  static UdtfSince of(UdtfSource source, org.lance.Dataset opened, ViewTables view,
      UdtfDefinition def, RefreshOptions options, UdtfStart st) {
    Long base = st.baseVersion();
    if (st.rebuild() != null || base == null || base >= source.version()) {
      return NOTHING;
    }
    String removed = st.removed();
    if (removed != null || !st.complete() || def.partitionByIndexedColumn() != null) {
      return new UdtfSince(removed, null);
    }
    org.lance.Dataset ds = opened;
    try {
      // Without stable row ids a compaction renumbers the rows, and a source LIMIT (first n
      // rows in _rowid order) may then take other rows: rebuild.
      if (!Boolean.TRUE.equals(io.lancerest.spark.mv.query.StableRowIds.of(ds))) {
        return new UdtfSince(removed, null);
      }
      SourceHistory h = SourceHistory.after(ds, base);
      LOG.info("View '{}': source {}", view.viewName(), h);
      return new UdtfSince(removed, h.rowsUnchanged() ? h : null);
    } catch (RuntimeException e) {
      throw new UdtfRefreshException("Cannot read the history of the source of view '"
          + view.viewName() + "' at '" + source.location() + "' up to version "
          + source.version() + ": " + e.getMessage(), e);
    }
  }
}
