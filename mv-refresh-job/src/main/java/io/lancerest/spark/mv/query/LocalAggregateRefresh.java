package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.definition.Aggregation;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;

/**
 * An aggregate view's incremental refresh with no Spark job for the change itself: the arrived,
 * departed and view rows are on the driver already, so the merge ({@link LocalAggregateMerge})
 * and the write ({@link FragmentShipping}) run there too. The keys, arguments and WHERE are
 * still Spark's own expressions, compiled and run over those rows ({@link LocalProjection});
 * so are the view's values and HAVING, over a local relation of the touched groups, which
 * Spark's optimizer evaluates while planning, without a job. Only groups that
 * must be recomputed from their rows read the source in Spark, as on the Spark path.
 */
final class LocalAggregateRefresh {
  private LocalAggregateRefresh() {}

  /** The rows the driver holds for the change: each a list, none missing. */
  record Inputs(StructType columns, List<Row> arrived, List<Row> departed, List<Row> view) {}

  /** The touched groups' new state ({@link LocalAggregateMerge}) and its columns. */
  record Merged(List<Row> rows, StructType schema) {}

  /**
   * The merge of the change on the driver, or {@code null} when it cannot run there ({@link
   * LocalAggregateMerge#declines}).
   */
  static Merged merge(RefreshContext ctx, ViewTables t, RefreshStart s, AggregateState st,
      Aggregation agg, Inputs in) {
    try {
      return mergeOrDecline(ctx, t, s, st, agg, in);
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      // Nothing was written: the Spark path evaluates the same rows and reports what fails.
      LOG.info("View {} (job {}): groups merged in Spark: the merge on the driver failed ({})",
          t.viewName(), ctx.jobId(), e.toString().lines().findFirst().orElse(""));
      return null;
    }
  }

  private static Merged mergeOrDecline(RefreshContext ctx, ViewTables t, RefreshStart s,
      AggregateState st, Aggregation agg, Inputs in) {
    // One compiled projection for both sides: which list a row comes from tells its sign.
    LocalProjection project = LocalProjection.of(ctx.spark(), in.columns(),
        d -> st.changes(d, 1));
    if (project == null) {
      LOG.info("View {} (job {}): groups merged in Spark: the keys, arguments or WHERE need a "
          + "Spark job to evaluate", t.viewName(), ctx.jobId());
      return null;
    }
    StructType changes = project.schema();
    boolean ansi = Boolean.parseBoolean(ctx.spark().conf().get("spark.sql.ansi.enabled",
        "false"));
    String declined = LocalAggregateMerge.declines(st, agg, changes, ansi, s.target);
    if (declined != null) {
      LOG.info("View {} (job {}): groups merged in Spark: {}", t.viewName(), ctx.jobId(),
          declined);
      return null;
    }
    List<Row> arrived = new ArrayList<>(in.arrived().size());
    project.apply(in.arrived(), arrived);
    List<Row> departed = new ArrayList<>(in.departed().size());
    project.apply(in.departed(), departed);
    StructType viewSchema = s.target.add("_rowaddr", org.apache.spark.sql.types.DataTypes
        .LongType, false);
    return new Merged(LocalAggregateMerge.merge(st, agg, changes, arrived, departed,
        viewSchema, in.view()), LocalAggregateMerge.schema(st, agg, changes));
  }

  /**
   * The staged refresh, or {@code null} when the merge cannot run on the driver (then nothing
   * was written, and the caller runs the Spark path with the same rows).
   *
   * @param recomputed the source rows of the groups a merged relation marks {@code
   *     __recompute}
   */
  static StagedRefresh<RefreshResult> tryRefresh(RefreshContext ctx, ViewTables t,
      RefreshStart s, RefreshOptions o, AggregateState st, Aggregation agg, SourceChanges ch,
      Inputs in, UnaryOperator<Dataset<Row>> recomputed, long t0) {
    ctx.describe("merge the changes of " + in.departed().size() + " departed rows and "
        + in.arrived().size() + " arrived rows into the groups on the driver");
    long merging = System.currentTimeMillis();
    Merged m = merge(ctx, t, s, st, agg, in);
    merging = System.currentTimeMillis() - merging;
    if (m == null) {
      return null;
    }
    List<Row> merged = m.rows();
    Dataset<Row> state = ctx.spark().createDataFrame(merged, m.schema());
    List<Long> deletes = new ArrayList<>();
    long recompute = 0;
    for (Row r : merged) {
      if (!r.isNullAt(r.length() - 1)) {
        deletes.add(r.getLong(r.length() - 1));
      }
      recompute += r.getBoolean(r.length() - 2) ? 1 : 0;
    }
    List<Row> write = new ArrayList<>(st.viewRows(state.where("NOT __recompute"), s.target)
        .collectAsList());
    long recomputing = System.currentTimeMillis();
    if (recompute > 0) {
      ctx.describe("aggregate " + recompute + " groups again from their rows");
      write.addAll(st.viewRows(st.totals(st.changes(recomputed.apply(state), 1)), s.target)
          .collectAsList());
    }
    long t1 = System.currentTimeMillis();
    recomputing = t1 - recomputing;
    LOG.info("View {} (job {}): source version {} (watermark {}): {}; {} source rows left "
        + "changed fragments, {} rows arrived in them; {} groups touched, {} in the view, {} "
        + "recomputed from their rows; merged on the driver", t.viewName(), ctx.jobId(),
        s.srcVersion, s.watermark, ch.diff, in.departed().size(), in.arrived().size(),
        merged.size(), deletes.size(), recompute);
    ctx.observe(RefreshListener.Probe.WRITE_PATH, "driver");
    WrittenFragments w = write(ctx, t, s, o, write);
    long t2 = System.currentTimeMillis();
    return QueryCommit.stage(ctx, t, s, w, deletes, false, String.format(
        "fragment diff %d ms, groups on the driver %d ms (plan and read %d ms, merge %d ms, %d groups "
        + "recomputed %d ms), write on the driver %d ms", ch.millis, t1 - t0,
        t1 - t0 - merging - recomputing, merging, recompute, recomputing, t2 - t1));
  }

  private static WrittenFragments write(RefreshContext ctx, ViewTables t, RefreshStart s,
      RefreshOptions o, List<Row> rows) {
    if (rows.isEmpty()) {
      return new WrittenFragments(List.of(), 0, null, List.of());
    }
    scala.Function1<Object, Object> toInternal =
        CatalystTypeConverters.createToCatalystConverter(s.target);
    Iterator<Row> it = rows.iterator();
    Iterator<InternalRow> internal = new Iterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public InternalRow next() {
        return (InternalRow) toInternal.apply(it.next());
      }
    };
    try (BufferAllocator a = new RootAllocator()) {
      // column 0 is __source_row_id: its range per fragment is recorded with the commit
      FragmentShipping.Written w = FragmentShipping.writeRows(t.view(), a, s.plain, internal,
          o.maxRowsPerFragment() == null ? 0 : o.maxRowsPerFragment(),
          () -> ctx.listener().afterTaskBatch(-1), 0);
      return new WrittenFragments(w.fragments(), w.rows(), null, w.ranges());
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Refresh of view " + t.viewName() + " (job "
          + ctx.jobId() + ") failed while writing its new rows on the driver; nothing was "
          + "committed, the view is unchanged: " + e.getMessage(), e);
    }
  }
}
