package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceIdentity;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.RefreshDriver;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Incremental refresh of a query view to a source version, as ONE atomic {@link ViewCommit}.
 *
 * <p>With {@code S} the row ids of the filtered source at the target version, {@code U} those
 * of them updated after the watermark ({@code _row_last_updated_at_version > watermark}), and
 * {@code V} the {@code __source_row_id}s in the view:
 * <ul>
 *   <li>rows of {@code V − S} are deleted (source row deleted, or no longer matching the
 *       filter);</li>
 *   <li>rows of {@code V ∩ U} are deleted and re-projected (updated in place, same row id);</li>
 *   <li>rows of {@code S − V} are appended (new source rows, or rows that entered the filter).
 *       lance-spark's UPDATE gives the row a new {@code _rowid}: the old id is then in {@code V −
 *       S} and the new one in {@code S − V}, so it is a delete plus an insert.</li>
 * </ul>
 * Spark tasks write the new rows as uncommitted fragments; the driver commits deletions, new
 * fragments, the watermark (field metadata on {@code __source_row_id}), the base table version
 * and the last job in one Overwrite read at the view version the refresh started from. A crash
 * or failure before that commit leaves the view at its version; the next refresh recomputes the
 * same change from the same state. A concurrent commit to the view makes the commit fail; the
 * refresh is then recomputed from the new version ({@link RefreshDriver}).
 *
 * <p>The steps follow the data: {@link RefreshStart} reads the view and the source, {@link
 * QueryAttempt} chooses the path, {@link FragmentDiffRefresh} (changed source fragments only)
 * or {@link RowScanRefresh} (every row id) computes the change, {@link SparkRefreshWrite} or
 * {@link LocalRefreshWrite} writes the new rows and {@link QueryCommit} stages the commit.
 */
public final class QueryRefresh {
  /**
   * The log of every step of a query refresh: one logger name, whichever type writes the line,
   * is what operators filter a refresh's lines by.
   */
  static final Logger LOG = LoggerFactory.getLogger(QueryRefresh.class);

  /**
   * View schema metadata: when the source version the view reflects was written, to tell a
   * source table replaced under the same name from the one the view was refreshed from.
   */
  public static final String SOURCE_VERSION_TIME = SourceIdentity.KEY;

  /** What computes a query view's rows, as a failure of it names it. */
  static final String FUNCTION = "the view's SELECT";

  private QueryRefresh() {}

  /** Refreshes the view in {@code ctx} (its job id, listener, caches and job). */
  public static RefreshResult run(RefreshContext ctx, ViewTables t, SourceQuery query,
      RefreshOptions options) {
    return RefreshDriver.refresh(ctx, t, options.srcVersion(), options.force(),
        options.maxRowsPerFragment(), kind(t, query, options));
  }

  /**
   * What {@link #run} would do now, with nothing written or committed ({@code EXPLAIN REFRESH});
   * the same options are checked and the same errors raised as by a refresh.
   */
  public static RefreshPlan explain(SparkSession spark, ViewTables t, SourceQuery query,
      RefreshOptions options) {
    RefreshContext ctx = new RefreshContext(spark, t.viewName(), "explain", null);
    return RefreshDriver.explain(ctx, t, options.srcVersion(), options.force(),
        kind(t, query, options));
  }

  /** Query views in {@link RefreshDriver}'s sequence: one {@link QueryAttempt} per attempt. */
  private static ViewRefresh<RefreshResult> kind(ViewTables t, SourceQuery q, RefreshOptions o) {
    return ViewRefresh.of(MaterializedViewKind.QUERY, FUNCTION,
        r -> new ViewRefresh.Outcome(r.status(), r.sourceVersion(), r.rowsInserted(),
            r.rowsDeleted(), r.skipped()),
        (ctx, target) -> q.aggregation() != null
            ? new AggregateAttempt(ctx, t, q, o, new RefreshStart(t, target))
            : new QueryAttempt(ctx, t, q, o, new RefreshStart(t, target)));
  }
}
