package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.functions;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The write phase as a Spark job: {@link WriteTask}s write the projected rows as uncommitted
 * view fragments, gathered here for the commit.
 */
record SparkRefreshWrite(RefreshContext ctx, ViewTables t, RefreshOptions o) {
  /** More runs of ids than this and tasks filter by a broadcast set instead of pushed ranges. */
  private static final int MAX_PUSHED_RUNS = 64;
  /** Rows of changed source fragments one incremental write task takes on. */
  static final long ROWS_PER_TASK = 1L << 20;

  /**
   * Writes the projected rows {@code task} selects; nothing is committed.
   *
   * @param packTasks 0: one task per input partition; otherwise the input partitions are
   *     coalesced into {@code max(packTasks, min(partitions, defaultParallelism))} tasks. A
   *     coalesce without shuffle runs the whole upstream plan (source read, the SELECT's
   *     expressions and UDFs) in those tasks, so packing never goes below what the cluster
   *     can run at once. An explicit {@code concurrency} option overrides both.
   */
  WrittenFragments write(Dataset<Row> projected, WriteTask task, int packTasks) {
    Dataset<Row> in = projected;
    if (task.onlyIds != null) {
      // Pushed down to Lance, which then skips the data of other rows; the tasks still check
      // the broadcast set when there are too many runs to push.
      List<long[]> runs = RowIdSet.runs(task.onlyIds, MAX_PUSHED_RUNS);
      if (runs != null) {
        in = in.where(runPredicate(runs, 0, runs.size()));
      }
    }
    long planning = System.currentTimeMillis();
    JavaRDD<InternalRow> rdd = in.queryExecution().toRdd().toJavaRDD();
    int parts = rdd.getNumPartitions();
    int limit = taskLimit(parts, packTasks);
    if (limit > 0 && parts > limit) {
      rdd = rdd.coalesce(limit);
    }
    ctx.observe(RefreshListener.Probe.WRITE_TASKS, rdd.getNumPartitions());
    task.reportingTo(ctx.listener());
    task.checkingVectors(projected.schema(), t.viewName());
    planning = System.currentTimeMillis() - planning;
    ctx.describe("write " + (task.onlyIds == null ? "new" : String.valueOf(
        task.onlyIds.getLongCardinality())) + " rows in " + rdd.getNumPartitions() + " tasks");
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(ctx.spark().sparkContext());
    List<Broadcast<byte[]>> broadcasts = task.broadcast(jsc);
    List<WriteTask.Output> outs;
    try {
      // a task's failure reaches the refresh's driver as Spark reports it (TaskFailures)
      outs = rdd.mapPartitions(task).collect();
    } finally {
      broadcasts.forEach(Broadcast::destroy);
    }
    List<FragmentMetadata> out = new ArrayList<>();
    List<FragmentSourceRanges.Range> ranges = new ArrayList<>();
    Roaring64NavigableMap kept = Roaring64NavigableMap.bitmapOf();
    long rows = 0;
    for (WriteTask.Output part : outs) {
      List<FragmentMetadata> fs = FragmentShipping.fromBytes(part.fragments());
      out.addAll(fs);
      for (int i = 0; i < fs.size(); i++) {
        ranges.add(part.ranges() == null || part.ranges().size() != fs.size() ? null
            : part.ranges().get(i));
      }
      rows += part.rows();
      if (part.kept() != null) {
        kept.or(RowIdSet.deserialize(part.kept()));
      }
    }
    LOG.info("View {} (job {}): {} tasks wrote {} rows in {} fragments (not committed yet); "
        + "planning {} ms", t.viewName(), ctx.jobId(), outs.size(), rows, out.size(), planning);
    return new WrittenFragments(out, rows, kept, ranges);
  }

  /** Tasks of a write over {@code partitions} input partitions ({@link #write}). */
  int writeTasks(int partitions, int packTasks) {
    int limit = taskLimit(partitions, packTasks);
    return limit > 0 && partitions > limit ? limit : Math.max(1, partitions);
  }

  /** Write tasks packing {@code rows} changed rows, {@link #ROWS_PER_TASK} a task. */
  static int packTasks(long rows) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, (rows + ROWS_PER_TASK - 1)
        / ROWS_PER_TASK));
  }

  /** The most tasks a write over {@code partitions} input partitions runs in; 0: no limit. */
  private int taskLimit(int partitions, int packTasks) {
    return o.concurrency() != null ? o.concurrency()
        : packTasks == 0 ? 0
        : Math.max(packTasks, Math.min(partitions,
            ctx.spark().sparkContext().defaultParallelism()));
  }

  private static Column runPredicate(List<long[]> runs, int from, int to) {
    if (to - from == 1) {
      long[] r = runs.get(from);
      Column c = functions.col(GenevaLayout.SOURCE_ROW_ID);
      return r[0] == r[1] ? c.equalTo(r[0]) : c.between(r[0], r[1]);
    }
    int mid = (from + to) >>> 1;
    return runPredicate(runs, from, mid).or(runPredicate(runs, mid, to));
  }
}
