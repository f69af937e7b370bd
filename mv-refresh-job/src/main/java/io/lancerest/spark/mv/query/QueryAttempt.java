package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.rowindex.ViewRows;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * One attempt of a query view refresh: from what {@link RefreshStart} found it chooses the
 * fragment-diff or the row-scan path, to compute the change or to explain it.
 */
record QueryAttempt(RefreshContext ctx, ViewTables t, SourceQuery q, RefreshOptions o,
    RefreshStart s) implements ViewRefresh.Attempt<RefreshResult> {
  @Override
  public boolean upToDate() {
    return s.upToDate();
  }

  @Override
  public RefreshResult skipped() {
    return s.skipped(ctx);
  }

  /** Whether only the changed source fragments are read ({@link FragmentDiffRead#changes}). */
  private boolean byFragmentsPossible() {
    return !s.replaceAll && q.limit() == null && s.watermark > 0
        && ctx.listener().readChangedFragmentsOnly();
  }

  @Override
  public StagedRefresh<RefreshResult> compute() {
    QueryLayout.requireColumns(q, s.target, t.viewName());
    // 3. which source rows are in the view now, and which changed since the watermark
    boolean replaceAll = s.replaceAll;
    if (s.watermarkRemoved != null) {
      LOG.warn("View {} (job {}): {}", t.viewName(), ctx.jobId(), s.watermarkRemovedReason());
    }
    if (byFragmentsPossible()) {
      SourceChanges ch = new FragmentDiffRead(ctx, t).changes(s);
      if (ch.diff != null) {
        return new FragmentDiffRefresh(ctx, t, q, o, s).compute(ch);
      }
    }
    SourceHistory history = s.rowScanHistory();
    if (history != null && history.changedInPlace() == null) {
      LOG.warn("View {} (job {}): {}", t.viewName(), ctx.jobId(), s.unknownHistoryReason(history));
      replaceAll = true;
    }
    return new RowScanRefresh(ctx, t, q, o, s).compute(replaceAll, history);
  }

  /**
   * What {@link #compute} would do, found the same way up to the write, with nothing written
   * or committed. The view rows to delete and to write are counted: on the fragment-diff path
   * by looking the departed source rows up in the view and counting the filtered rows of the
   * changed fragments (a Spark count of those fragments), on a rebuild by counting the
   * filtered source.
   */
  @Override
  public RefreshPlan explain() {
    if (upToDate()) {
      return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY, RefreshPlan.Mode.NO_OP,
          "the view already reflects source version " + s.srcVersion, s.watermark,
          s.srcVersion, s.sourceFragments, List.of(), 0, s.viewRows, 0L, 0L,
          RefreshPlan.Write.NONE, null, "");
    }
    QueryLayout.requireColumns(q, s.target, t.viewName());
    Long from = s.watermark == 0 ? null : s.watermark;
    String fallback = null;
    SparkRefreshWrite writes = new SparkRefreshWrite(ctx, t, o);
    if (byFragmentsPossible()) {
      FragmentDiffRead read = new FragmentDiffRead(ctx, t);
      SourceChanges ch = read.changes(s);
      if (ch.diff != null) {
        ViewRows inView = ch.departed.isEmpty() ? new ViewRows()
            : read.viewRowsOf(s, ch.departed);
        long write = 0;
        RefreshPlan.Write where = RefreshPlan.Write.NONE;
        Integer tasks = null;
        String note = "";
        if (!ch.rescan.isEmpty()) {
          Dataset<Row> scoped = FragmentScopedRead.restrict(QueryLayout.readSource(ctx.spark(),
              t.source(), s.srcVersion),
              new HashSet<>(ch.rescan));
          write = QueryLayout.filtered(scoped, q).count();
          String declined = LocalRefreshWrite.declines(ctx.spark(), ch.rescanRows);
          int packed = SparkRefreshWrite.packTasks(ch.rescanRows);
          if (declined == null) {
            where = RefreshPlan.Write.DRIVER;
            note = "a Spark job of " + writes.writeTasks(ch.rescan.size(), packed)
                + " tasks writes instead if the definition cannot "
                + "run on the driver (a Python UDF, a subquery ...)";
          } else {
            where = RefreshPlan.Write.SPARK_JOB;
            tasks = writes.writeTasks(ch.rescan.size(), packed);
            note = "not on the driver: " + declined;
          }
        }
        String reason = "source changed since version " + s.watermark + ": " + ch.diff
            + "; " + ch.departed.getLongCardinality() + " source rows left changed fragments"
            + (ch.moved == 0 ? "" : ", " + ch.moved + " more were only moved by a compaction "
            + "and are kept without reading them");
        List<String> notes = new ArrayList<>();
        if (!note.isEmpty()) {
          notes.add(note);
        }
        boolean both = !ch.rescan.isEmpty() && !ch.departed.isEmpty();
        if (both && ch.history.changedInPlace() == null) {
          notes.add("the source's history since version " + s.watermark + " cannot tell "
              + "which rows a compaction moved unchanged (" + ch.history.unknown() + "): "
              + "the rows of changed fragments that were in the view are written again");
        } else if (both) {
          notes.add("rows in the view that a compaction only moved are kept, not rewritten, "
              + "and count on both sides");
        }
        return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY,
            RefreshPlan.Mode.INCREMENTAL, reason, from, s.srcVersion, s.sourceFragments,
            ch.rescan, ch.rescanRows, s.viewRows, (long) inView.size(), write, where, tasks,
            String.join("; ", notes));
      }
      fallback = ch.why;
    }
    Dataset<Row> source = QueryLayout.readSource(ctx.spark(), t.source(), s.srcVersion);
    long filtered = QueryLayout.filtered(source, q).count();
    if (q.limit() != null) {
      filtered = Math.min(filtered, q.limit());
    }
    int tasks = writes.writeTasks(s.sourceFragments, 0);
    SourceHistory history = s.rowScanHistory();
    if (s.replaceAll || history != null && history.changedInPlace() == null) {
      String reason = s.rebuild != null ? s.rebuild
          : s.watermarkRemoved != null ? s.watermarkRemovedReason()
          : s.replaceAll ? "the view is empty" : s.unknownHistoryReason(history);
      return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY, RefreshPlan.Mode.FULL,
          reason, from, s.srcVersion, s.sourceFragments, null, s.sourceRows, s.viewRows,
          s.viewRows, filtered, RefreshPlan.Write.SPARK_JOB, tasks, "");
    }
    String reason = q.limit() != null ? "LIMIT view: every source row id is compared with the "
        + "view's" : s.watermark == 0 ? "the view has no recorded source version"
        : !ctx.listener().readChangedFragmentsOnly() ? "fragment comparison is off"
        : fallback + "; every source row id is compared with the view's";
    return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY,
        RefreshPlan.Mode.INCREMENTAL, reason, from, s.srcVersion, s.sourceFragments, null,
        s.sourceRows, s.viewRows, null, null, RefreshPlan.Write.SPARK_JOB, tasks,
        "the rows to delete and to write are known only after comparing every row id; the "
        + "view will hold " + filtered + " rows");
  }
}
