package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The refresh that compares every source row id with the view's (the {@code S}, {@code U},
 * {@code V} rule of {@link QueryRefresh}), or rebuilds the view; used when the changed source
 * fragments alone cannot tell the change.
 */
record RowScanRefresh(RefreshContext ctx, ViewTables t, SourceQuery q, RefreshOptions o,
    RefreshStart s) {
  /**
   * Computes and stages the change.
   *
   * @param replaceAll rebuild the view: every row of it goes
   * @param history the source's history since the watermark ({@link
   *     RefreshStart#rowScanHistory}), or {@code null}
   */
  StagedRefresh<RefreshResult> compute(boolean replaceAll, SourceHistory history) {
    long watermark = s.watermark;
    long srcVersion = s.srcVersion;
    long viewRows = s.viewRows;
    // Built only here: planning a lance-spark read of the whole source opens it and analyses
    // the SELECT, which the fragment-diff path does not need.
    Dataset<Row> source = QueryLayout.readSource(ctx.spark(), t.source(), srcVersion, s.sourceBatchRows);
    Dataset<Row> projected = QueryLayout.project(source, q, s.target, t.viewName());
    // A rebuild without LIMIT writes every filtered source row: no id scan needed.
    boolean everything = replaceAll && q.limit() == null;
    RowIdScans scans = new RowIdScans(ctx, t, q);
    long t0 = System.currentTimeMillis();
    Roaring64NavigableMap[] su = everything
        ? new Roaring64NavigableMap[] {Roaring64NavigableMap.bitmapOf(),
            Roaring64NavigableMap.bitmapOf()}
        : scans.source(source, watermark, !replaceAll);
    long t1 = System.currentTimeMillis();
    Roaring64NavigableMap inSource = su[0];
    Roaring64NavigableMap updated = su[1];
    if (!replaceAll && history != null) {
      updated.or(history.changedInPlace());
    }
    Roaring64NavigableMap inView = Roaring64NavigableMap.bitmapOf();
    List<Long> deletes = new ArrayList<>();
    if (!replaceAll) {
      scans.view(s.readVersion, inSource, updated, inView, deletes);
    }
    long t2 = System.currentTimeMillis();
    Roaring64NavigableMap changed = RowIdSet.intersection(inView, updated);
    Roaring64NavigableMap fresh = RowIdSet.difference(inSource, inView);
    if (q.limit() != null) {
      long kept = replaceAll ? 0 : inView.getLongCardinality() - deletes.size()
          + changed.getLongCardinality();
      long room = Math.max(0, q.limit() - kept);
      if (fresh.getLongCardinality() > room) {
        fresh = RowIdSet.smallest(fresh, room);
      }
    }
    Roaring64NavigableMap toWrite = RowIdSet.difference(fresh, changed);
    toWrite.or(changed);
    if (replaceAll) {
      // A rebuild does not look at which rows are in the view (all go), and without LIMIT it
      // does not collect the source's row ids either: what it writes is counted by the write.
      LOG.info("View {} (job {}): source version {} (watermark {}): rebuilding the view ({}): "
          + "{} of the {} source rows, replacing the {} rows in the view", t.viewName(),
          ctx.jobId(), srcVersion, watermark, s.rebuildReason(), everything
          ? "writing every row the definition selects" : "writing " + toWrite
          .getLongCardinality() + " (LIMIT " + q.limit() + ")", s.sourceRows, viewRows);
    } else {
      LOG.info("View {} (job {}): source version {} (watermark {}): {} source rows, {} in the "
          + "view; writing {} ({} changed in place), deleting {}", t.viewName(), ctx.jobId(),
          srcVersion, watermark, inSource.getLongCardinality(), inView.getLongCardinality(),
          toWrite.getLongCardinality(), changed.getLongCardinality(), deletes.size());
    }

    // 4. new rows, written by Spark tasks as uncommitted fragments
    SparkRefreshWrite writer = new SparkRefreshWrite(ctx, t, o);
    WrittenFragments w = everything
        ? writer.write(projected, WriteTask.every(t, s.plain, o), 0)
        : toWrite.isEmpty() ? new WrittenFragments(List.of(), 0, null, List.of())
        : writer.write(projected, toWrite.getLongCardinality() == inSource.getLongCardinality()
            ? WriteTask.every(t, s.plain, o) : WriteTask.only(t, s.plain, o, toWrite), 0);
    long t3 = System.currentTimeMillis();
    // 5. one commit: deletions, new fragments, watermark, base version, last job
    return QueryCommit.stage(ctx, t, s, w, deletes, replaceAll,
        String.format("source scan %d ms, view scan %d ms, write %d ms", t1 - t0, t2 - t1,
            t3 - t2));
  }
}
