package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.connector.Memoized;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.fragments.FragmentDiff;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.rowindex.ViewRows;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The refresh from the source fragments that changed since the watermark: it writes their
 * filtered rows the view does not already hold unchanged and deletes the view rows of the
 * source rows that left them.
 *
 * <p>A row of the filtered new and rewritten fragments ({@code N}) that is in the view, not
 * updated since the watermark ({@code _row_last_updated_at_version}) and not changed in place
 * by the source's commits since ({@link SourceChanges#keepable}: a compaction may have lost its
 * update version) is kept (a compaction moved it); every other row of {@code N} is written;
 * every view row of a departed source row not kept is deleted. Rows of unchanged fragments are
 * the same rows with the same values as at the watermark, and the view is exact for that
 * version, so they need nothing.
 */
record FragmentDiffRefresh(RefreshContext ctx, ViewTables t, SourceQuery q, RefreshOptions o,
    RefreshStart s) {
  /** Writes and stages the change {@code ch} ({@link FragmentDiffRead#changes}) describes. */
  StagedRefresh<RefreshResult> compute(SourceChanges ch) {
    FragmentDiff diff = ch.diff;
    List<Integer> rescan = ch.rescan;
    long rescanRows = ch.rescanRows;
    ctx.observe(RefreshListener.Probe.SOURCE_FRAGMENTS_READ, List.copyOf(rescan));
    ctx.observe(RefreshListener.Probe.FRAGMENT_DIFF, diff);
    long t1 = System.currentTimeMillis();
    // the view rows of the source rows that left changed fragments
    ViewRows inView = ch.departed.isEmpty() ? new ViewRows()
        : new FragmentDiffRead(ctx, t).viewRowsOf(s, ch.departed);
    long t2 = System.currentTimeMillis();
    LOG.info("View {} (job {}): source version {} (watermark {}): {}; {} source rows left "
        + "changed fragments, {} of them in the view ({})", t.viewName(), ctx.jobId(), s.srcVersion,
        s.watermark, diff + (ch.byCommits ? " (only those the commits since touched were "
            + "compared)" : " (every fragment of both versions compared)"),
        ch.departed.getLongCardinality(), inView.size(), inView.describe());
    WrittenFragments w = new WrittenFragments(List.of(), 0, Roaring64NavigableMap.bitmapOf(),
        List.of());
    String localPhases = "";
    if (!rescan.isEmpty()) {
      // Built only when needed: the driver path reuses the previous refresh's compiled plan
      // when it can, and planning is a large part of a small refresh.
      Supplier<Dataset<Row>> projected = Memoized.of(() -> QueryLayout.project(
          FragmentScopedRead.restrict(QueryLayout.readSource(ctx.spark(), t.source(), s.srcVersion), new HashSet<>(rescan)), q, s.target,
          t.viewName(), functions.col("_row_last_updated_at_version")));
      // The changed fragments are usually a few small ones (each append or UPDATE adds its
      // own): pack them into one task per ROWS_PER_TASK rows, not one per fragment, so that
      // the refresh pays the per-task cost (dataset open, fragment write) a few times and the
      // view gets a few fragments instead of as many as the source's commits. The write still
      // uses up to the cluster's parallelism when there are that many changed partitions.
      int tasks = SparkRefreshWrite.packTasks(rescanRows);
      // Few changed rows: the same write on the driver, without a Spark job's fixed cost.
      ctx.describe("write changed rows on the driver");
      LocalRefreshWrite.Outcome local = LocalRefreshWrite.tryWrite(ctx.spark(), t, q,
          ch.sourceFields, o.maxRowsPerFragment() == null ? 0 : o.maxRowsPerFragment(),
          s.datasets.source(s.srcVersion), rescan, rescanRows, s.plain, s.target, projected,
          ch.keepable(inView.ids), s.watermark,
          ctx.listener()::afterTaskBatch, ctx.jobId(), ctx.listener(),
          ctx.caches().get(CompiledPlans.class, CompiledPlans::new));
      LOG.info("View {} (job {}): write on the {}: {}", t.viewName(), ctx.jobId(),
          local.written() != null ? "driver" : "Spark path", local.why());
      if (local.written() != null) {
        ctx.observe(RefreshListener.Probe.WRITE_PATH, "driver");
        w = local.written();
        localPhases = ", " + local.phases();
      } else {
        ctx.observe(RefreshListener.Probe.WRITE_PATH, "spark: " + local.why());
        w = new SparkRefreshWrite(ctx, t, o).write(projected.get(), WriteTask.keeping(t,
            s.plain, o, ch.keepable(inView.ids), s.watermark, s.target.fields().length), tasks);
      }
    }
    long t3 = System.currentTimeMillis();
    List<Long> deletes = new ArrayList<>();
    for (int i = 0; i < inView.size(); i++) {
      if (!w.kept().contains(inView.sourceRowId(i))) {
        deletes.add(inView.address(i));
      }
    }
    return QueryCommit.stage(ctx, t, s, w, deletes, false,
        String.format("fragment diff %d ms (%d rescanned), view scan %d ms, write %d ms%s",
            ch.millis, rescan.size(), t2 - t1, t3 - t2, localPhases));
  }
}
