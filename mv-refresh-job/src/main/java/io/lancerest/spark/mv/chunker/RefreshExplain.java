package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import java.util.List;

/** Describes what a prepared chunker refresh would do (EXPLAIN REFRESH), with nothing written. */
final class RefreshExplain {
  private RefreshExplain() {}

  static RefreshPlan explain(PreparedRefresh p) {
    ChunkerRun run = p.run;
    ViewTables t = run.t();
    RefreshOptions o = run.o();
    Long from = p.watermark == 0 ? null : p.watermark;
    SourceState st = p.state;
    if (p.upToDate()) {
      return new RefreshPlan(t.viewName(), MaterializedViewKind.CHUNKER,
          RefreshPlan.Mode.NO_OP, "the view already reflects source version " + p.srcVersion,
          from, p.srcVersion, st.fragmentsNow, List.of(), 0, p.viewRows, 0L, 0L,
          RefreshPlan.Write.NONE, null, "");
    }
    long toExpand = st.toExpand.getLongCardinality();
    Long deletes = p.rebuild() ? p.viewRows
        : (long) ExistingRows.read(run, p.readVersion, p.deleteParents, false)
            .deleteAddresses.size();
    String reason = p.rebuild != null ? p.rebuild + ": every parent is expanded again"
        : p.watermarkRemoved != null ? p.watermarkRemovedReason()
        : p.stateLost != null ? p.stateLostReason()
        : o.outputLimit() != null ? "output_limit: every source fragment is read"
        : !p.truncated.isEmpty() ? "parents cut off by an earlier output_limit: every source "
            + "fragment is read"
        : st.wholeSource ? "every source fragment is read (" + st.scope + ")"
        : "source changed since version " + p.watermark + ": " + st.scope;
    reason += "; " + toExpand + " parents to expand (" + st.changed.getLongCardinality()
        + " changed), " + st.gone.getLongCardinality() + " removed";
    // as the expansion does: the read of the whole source has one input partition per fragment
    int tasks = run.tasks(st.fragmentsNow, run.workItems(toExpand));
    boolean everyParent = st.wholeSource && st.present.equals(st.toExpand);
    String onDriver = everyParent || st.fragments == null ? "every source fragment is read"
        : LocalExpansion.declines(run.spark(), run.ctx(), toExpand);
    RefreshPlan.Write where = toExpand == 0 ? RefreshPlan.Write.NONE
        : onDriver == null ? RefreshPlan.Write.DRIVER : RefreshPlan.Write.SPARK_JOB;
    String note = toExpand == 0 ? ""
        : "the children written are known only by running the chunker on the " + toExpand
        + " parents" + (o.outputLimit() == null ? ""
        : "; output_limit " + o.outputLimit() + " then caps the view's rows")
        + (where != RefreshPlan.Write.DRIVER ? "" : "; a Spark job of " + tasks + " tasks "
        + "expands them instead if the definition cannot run on the driver, the parents "
        + "exceed " + LocalExpansion.MAX_BYTES_CONF + " or the chunker takes longer than "
        + LocalExpansion.MAX_MILLIS_CONF);
    return new RefreshPlan(t.viewName(), MaterializedViewKind.CHUNKER,
        p.rebuild() ? RefreshPlan.Mode.FULL : RefreshPlan.Mode.INCREMENTAL, reason, from,
        p.srcVersion, st.fragmentsNow, st.fragments, st.rowsScanned, p.viewRows, deletes,
        null, where, where == RefreshPlan.Write.SPARK_JOB ? tasks : null, note);
  }
}
