package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.refresh.AttemptDatasets;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import org.apache.spark.sql.SparkSession;

/**
 * What one chunker refresh attempt is asked to do, as each of its phases reads it: the context,
 * the view's tables, its definition, the options and the task settings they give.
 */
record ChunkerRun(RefreshContext ctx, ViewTables t, AttemptDatasets datasets,
    ChunkerDefinition def, RefreshOptions o, ChunkerTask.Settings settings) {
  static ChunkerRun of(RefreshContext ctx, ViewTables t, AttemptDatasets datasets,
      ChunkerDefinition def, RefreshOptions o) {
    return new ChunkerRun(ctx, t, datasets, def, o, ChunkerTask.Settings.of(o, ctx.spark()));
  }

  SparkSession spark() {
    return ctx.spark();
  }

  String jobId() {
    return ctx.jobId();
  }

  /** The view's table at {@code version}, the one this attempt read (lent: not to be closed). */
  org.lance.Dataset view(long version) {
    return datasets.view(version);
  }

  /** Work items for {@code parents} ({@code source_task_size} each), at least one. */
  long workItems(long parents) {
    return Math.max(1, (parents + settings.sourceTaskSize() - 1) / settings.sourceTaskSize());
  }

  /**
   * Tasks that expand {@code items} work items read in {@code inputPartitions}: {@code
   * concurrency}, else at least Spark's default parallelism, never more than the items.
   */
  int tasks(int inputPartitions, long items) {
    int target = o.concurrency() != null ? o.concurrency()
        : Math.max(inputPartitions, spark().sparkContext().defaultParallelism());
    return (int) Math.max(1, Math.min(target, items));
  }

  static long ms(long fromNanos, long toNanos) {
    return (toNanos - fromNanos) / 1_000_000;
  }
}
