package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.GenevaLayout;
import io.lancerest.spark.mv.InvalidViewDefinitionException;
import io.lancerest.spark.mv.MaterializedViewKind;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.RefreshPlan;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.SourceQuery;
import io.lancerest.spark.mv.ViewDefinition;
import io.lancerest.spark.mv.chunker.ChunkerRefresh;
import io.lancerest.spark.mv.chunker.ChunkerViews;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.query.QueryLayout;
import io.lancerest.spark.mv.query.QueryRefresh;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.RefreshCaches;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.udtf.UdtfDefinition;
import io.lancerest.spark.mv.udtf.UdtfRefresh;
import io.lancerest.spark.mv.udtf.UdtfRefreshException;
import io.lancerest.spark.mv.udtf.UdtfRefreshOptions;
import io.lancerest.spark.mv.udtf.UdtfRefreshResult;
import io.lancerest.spark.mv.udtf.UdtfSource;
import io.lancerest.spark.mv.udtf.UdtfView;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * The one place a client-managed refresh is routed by kind: query views to {@link QueryRefresh},
 * chunker views to {@link ChunkerViews}, UDTF views to {@link UdtfRefresh}. SQL REFRESH, the Java
 * API and the RefreshJob CLI all end here.
 */
final class KindDispatch {
  private KindDispatch() {}

  static RefreshResult refresh(SparkSession spark, String viewName, TableLocation view,
      TableLocation source, ViewDefinition def, RefreshOptions options, JobTracker job,
      RefreshListener listener, RefreshCaches caches) {
    options.checkApplicableTo(def.kind());
    RefreshContext ctx = new RefreshContext(spark, viewName, listener, caches, job);
    String jobId = job.jobId();
    try {
      return switch (def.kind()) {
        case QUERY -> QueryRefresh.run(ctx, new QueryRefresh.Tables(viewName, view.location(),
            view.storageOptions(), source.location(), source.storageOptions()),
            def.sourceQuery(), options);
        case CHUNKER -> ChunkerViews.refresh(ctx, new ChunkerRefresh.Tables(
            source.location(), source.storageOptions(), view.location(), view.storageOptions(),
            viewName, null), def, withJobId(options, jobId));
        case UDTF -> udtf(ctx, viewName, view, source, def, options);
      };
    } catch (Exception e) {
      throw unfit(viewName, def, e);
    }
  }

  /** What {@link #refresh} would do, with nothing written or committed. */
  static RefreshPlan explain(SparkSession spark, String viewName, TableLocation view,
      TableLocation source, ViewDefinition def, RefreshOptions options) {
    options.checkApplicableTo(def.kind());
    try {
      return switch (def.kind()) {
        case QUERY -> QueryRefresh.explain(spark, new QueryRefresh.Tables(viewName,
            view.location(), view.storageOptions(), source.location(), source.storageOptions()),
            def.sourceQuery(), options);
        case CHUNKER -> ChunkerRefresh.explain(spark, new ChunkerRefresh.Tables(
            source.location(), source.storageOptions(), view.location(), view.storageOptions(),
            viewName, null), ChunkerViews.definition(def), ChunkerViews.options(options,
            "explain", RefreshListener.NONE));
        case UDTF -> {
          UdtfArgs u = udtfArgs(spark, viewName, view, source, def, options, "explain",
              RefreshListener.NONE);
          yield UdtfRefresh.explain(spark, u.sourceAt, source.location(),
              source.storageOptions(), options.srcVersion(), u.view,
              UdtfDefinition.of(def.function()), u.options);
        }
      };
    } catch (Exception e) {
      throw unfit(viewName, def, e);
    }
  }

  /**
   * {@code e} as thrown to the user: Spark's analysis of the stored SELECT against today's
   * source (a checked exception in Java's eyes, hence the broad catch of the callers) means the
   * source no longer has what the view reads.
   */
  private static RuntimeException unfit(String viewName, ViewDefinition def, Exception e) {
    if (e instanceof AnalysisException ae) {
      return new InvalidViewDefinitionException("View " + viewName + " no longer fits its "
          + "source table " + String.join(".", def.sourceQuery().sourceTableId()) + ": "
          + ae.getSimpleMessage() + ". A column its SELECT reads was dropped, renamed or "
          + "changed since the view was created; nothing was committed. Recreate the view "
          + "(DROP MATERIALIZED VIEW, then CREATE MATERIALIZED VIEW) over the new schema", e);
    }
    return e instanceof RuntimeException re ? re : new IllegalStateException(e);
  }

  private static RefreshOptions withJobId(RefreshOptions o, String jobId) {
    return new RefreshOptions(o.srcVersion(), o.concurrency(), o.maxRowsPerFragment(),
        o.intraApplierConcurrency(), o.sourceTaskSize(), o.outputLimit(), o.cluster(),
        o.manifest(), jobId, o.force());
  }

  private record UdtfArgs(java.util.function.LongFunction<UdtfSource> sourceAt,
      UdtfView view, UdtfRefreshOptions options) {}

  private static RefreshResult udtf(RefreshContext ctx, String viewName, TableLocation view,
      TableLocation source, ViewDefinition def, RefreshOptions o) {
    UdtfArgs u = udtfArgs(ctx.spark(), viewName, view, source, def, o, ctx.jobId(),
        ctx.listener());
    UdtfRefreshResult r = UdtfRefresh.run(ctx, u.sourceAt, source.location(),
        source.storageOptions(), o.srcVersion(), u.view, UdtfDefinition.of(def.function()),
        u.options);
    java.util.Map<String, Long> details = new java.util.LinkedHashMap<>();
    details.put("partitions", r.partitions());
    details.put("partitions_computed", r.computed());
    details.put("partitions_reused", r.reused());
    details.put("udtf_calls", r.udtfCalls());
    return new RefreshResult(r.jobId(), r.status(), MaterializedViewKind.UDTF, r.sourceVersion(),
        r.rowsInserted(), r.rowsDeleted(), r.skipped().size(), r.duration().toMillis(), details);
  }

  private static UdtfArgs udtfArgs(SparkSession spark, String viewName, TableLocation view,
      TableLocation source, ViewDefinition def, RefreshOptions o, String jobId,
      RefreshListener listener) {
    SourceQuery q = def.sourceQuery();
    // RefreshDriver picks the version (and checks it exists) for each attempt
    java.util.function.LongFunction<UdtfSource> src = version -> new UdtfSource(
        source.location(), source.storageOptions(), version,
        (s, withRowId) -> projected(s, viewName, source, version, q, withRowId));
    UdtfRefreshOptions opts = new UdtfRefreshOptions(o.force(),
        o.concurrency() == null ? 0 : o.concurrency(),
        o.maxRowsPerFragment() == null ? 0 : o.maxRowsPerFragment(), jobId, null)
        .withListener(listener);
    return new UdtfArgs(src, new UdtfView(viewName, view.location(), view.storageOptions()),
        opts);
  }

  /**
   * The source query's rows (filter, limit and projection applied), optionally with _rowid.
   * A LIMIT keeps the first {@code n} filtered rows in {@code _rowid} order, as query views do:
   * a bare Spark limit takes whichever rows its tasks return first, so a rebuild of the same
   * source version could see other rows.
   */
  private static Dataset<Row> projected(SparkSession spark, String viewName,
      TableLocation source, long version, SourceQuery q, boolean withRowId) {
    Dataset<Row> df = QueryLayout.readSource(spark, source.location(), source.storageOptions(),
        version);
    if (q.filter() != null) {
      df = df.where(q.filter());
    }
    if (q.limit() != null) {
      if (q.limit() > Integer.MAX_VALUE) {
        throw new InvalidViewDefinitionException("The source query of view " + viewName
            + " has LIMIT " + q.limit() + "; a function view can take at most "
            + Integer.MAX_VALUE + " source rows (recreate it with a smaller LIMIT or none)");
      }
      // Sorted by an expression, not the bare column: lance-spark 0.4 would push a top-n on
      // _rowid into its scanner, which has no such column ("Column _rowid not found").
      df = df.orderBy(df.col("_rowid").plus(0)).limit(q.limit().intValue());
    }
    if (q.projection().isEmpty()) {
      return withRowId ? df.select(df.col("*"), df.col("_rowid")) : df;
    }
    List<Column> cols = new ArrayList<>();
    for (SourceQuery.OutputColumn c : q.projection()) {
      cols.add(functions.expr(c.expr()).as(c.name()));
    }
    if (withRowId) {
      cols.add(functions.col("_rowid"));
    }
    return df.select(cols.toArray(Column[]::new));
  }

  /** Geneva's view columns of the kind never come from the function (used by describe). */
  static boolean isLayoutColumn(String name) {
    return name.equals(GenevaLayout.SOURCE_ROW_ID) || name.equals(GenevaLayout.IS_SET)
        || name.equals(GenevaLayout.CHILD_INDEX);
  }
}
