package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/** What EXPLAIN REFRESH says a UDTF refresh would do now, with nothing computed or written. */
final class UdtfPlan {
  private UdtfPlan() {}

  /**
   * The plan of a refresh starting at {@code st}: a rebuild counts the partitions it would make
   * (the distinct keys of the source query, one Spark job, or the non-empty IVF partitions).
   */
  static RefreshPlan explain(SparkSession spark, UdtfSource source, org.lance.Dataset opened,
      ViewTables view, UdtfDefinition def, RefreshOptions options, UdtfStart st,
      UdtfSince since) {
    Long from = null;
    try {
      from = st.base() == null ? null : Long.parseLong(st.base().trim());
    } catch (NumberFormatException e) {
      // unreadable: shown as none
    }
    int fragments = opened.getFragments().size();
    long rows = opened.countRows();
    if (st.upToDate(source)) {
      return new RefreshPlan(view.viewName(), MaterializedViewKind.UDTF, RefreshPlan.Mode.NO_OP,
          "the view already reflects source version " + source.version(), from,
          source.version(), fragments, List.of(), 0, st.viewRows(), 0L, 0L,
          RefreshPlan.Write.NONE, null, "");
    }
    if (since.unchanged() != null) {
      return new RefreshPlan(view.viewName(), MaterializedViewKind.UDTF,
          RefreshPlan.Mode.INCREMENTAL, unchangedReason(since.unchanged(), from),
          from, source.version(), fragments, List.of(), 0, st.viewRows(), 0L, 0L,
          RefreshPlan.Write.NONE, null, "");
    }
    // A PARTIAL view at this source version: only its skipped partitions lack a checkpoint.
    boolean retry = st.rebuild() == null && from != null && from == source.version();
    String reason = st.rebuild() != null ? st.rebuild()
        : from == null ? "the view was never refreshed"
        : retry ? "the last refresh skipped partitions at source version " + from + "; they are "
            + "tried again, the partitions it checkpointed are reused"
        : since.removed() != null ? since.removed() + "; a UDTF view is rebuilt"
        : "source changed since version " + from + "; a UDTF view is always rebuilt";
    String key = def.keyColumn();
    long partitions;
    if (def.partitionByIndexedColumn() != null) {
      IvfPartitions.IvfIndex index = IvfPartitions.inspect(opened, source.location(),
          def.partitionByIndexedColumn());
      partitions = java.util.Arrays.stream(index.sizes()).filter(n -> n > 0).count();
    } else if (key == null) {
      partitions = 1;
    } else {
      partitions = source.reader().read(spark, false).select(key).distinct().count();
    }
    int tasks = key == null && def.partitionByIndexedColumn() == null ? 1
        : options.concurrency() != null ? options.concurrency()
        : UdtfCompute.TASKS_PER_SLOT * spark.sparkContext().defaultParallelism();
    return new RefreshPlan(view.viewName(), MaterializedViewKind.UDTF, RefreshPlan.Mode.FULL,
        reason + "; " + partitions + (partitions == 1 ? " partition" : " partitions")
        + (retry ? " in all" : " to compute"), from, source.version(), fragments, null, rows,
        st.viewRows(), st.viewRows(), null, RefreshPlan.Write.SPARK_JOB, tasks,
        "the rows written are known only by running the UDTF; partitions a failed or PARTIAL "
        + "run finished at this source version are reused");
  }

  static String unchangedReason(SourceHistory h, Long from) {
    return "no row of the source changed since version " + from + " (" + h + "): no "
        + "partition is computed, the commit records the new source version";
  }
}
