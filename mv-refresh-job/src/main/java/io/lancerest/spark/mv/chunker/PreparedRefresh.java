package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.refresh.RefreshTarget;
import io.lancerest.spark.mv.refresh.SourceVersions;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * What a chunker refresh read and decided before it expands anything ({@link RefreshPlanner}),
 * from which REFRESH computes its change and EXPLAIN describes it.
 */
final class PreparedRefresh implements ViewRefresh.Attempt<ChunkerRefreshResult> {
  final ChunkerRun run;
  long readVersion;
  Schema viewTable;
  long viewRows;
  long watermark;
  long srcVersion;
  String srcVersionTime;
  Roaring64NavigableMap processed;
  Roaring64NavigableMap truncated;
  /** The view's refresh state as read (its pointer is what the commit keeps or releases). */
  ParentState parents;
  Dataset<Row> source;
  ChunkerLayout layout;
  SourceState state;
  Roaring64NavigableMap deleteParents;
  Map<String, String> config;
  long scanMillis;
  /**
   * Why every parent is expanded again although nothing forces it: a cleanup removed the
   * watermark version of the source ({@link SourceVersions#removedByCleanup}), or {@code
   * null}.
   */
  String watermarkRemoved;
  /**
   * Why the view's refresh state cannot be read, so every parent is expanded again: its file is
   * gone (a version two refreshes back or more restored), damaged, or written at another
   * watermark; {@code null} when it was read.
   */
  String stateLost;

  /** Why every parent is expanded again ({@link RefreshTarget#rebuild}), or {@code null}. */
  final String rebuild;

  PreparedRefresh(ChunkerRun run, String rebuild) {
    this.run = run;
    this.rebuild = rebuild;
  }

  /** Whether every parent is expanded again and every view row replaced. */
  boolean rebuild() {
    return rebuild != null || watermarkRemoved != null || stateLost != null;
  }

  /** The reason of a rebuild when the watermark version is gone, for the log and EXPLAIN. */
  String watermarkRemovedReason() {
    return watermarkRemoved + "; which parents changed since then cannot be told, so every "
        + "parent is expanded again from source version " + srcVersion;
  }

  /** The reason of a rebuild when the refresh state cannot be read, for the log and EXPLAIN. */
  String stateLostReason() {
    return "the view's " + stateLost + ", so which parents were expanded cannot be told: every "
        + "parent is expanded again from source version " + srcVersion;
  }

  @Override
  public boolean upToDate() {
    return !rebuild() && state.toExpand.isEmpty() && deleteParents.isEmpty()
        && srcVersion == watermark && run.o().outputLimit() == null;
  }

  @Override
  public ChunkerRefreshResult skipped() {
    return new ChunkerRefreshResult(RefreshResult.JobStatus.SKIPPED, srcVersion, watermark,
        readVersion, 0, 0, 0, 0, 0, 0, List.of(), run.ctx().elapsedMillis());
  }

  @Override
  public RefreshPlan explain() {
    return RefreshExplain.explain(this);
  }

  @Override
  public StagedRefresh<ChunkerRefreshResult> compute() {
    return RefreshStaging.compute(this);
  }
}
