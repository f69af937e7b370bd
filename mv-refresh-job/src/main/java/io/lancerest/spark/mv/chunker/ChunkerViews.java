package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.InvalidViewDefinitionException;
import io.lancerest.spark.mv.MaterializedViewKind;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.ViewDefinition;
import io.lancerest.spark.mv.refresh.RefreshContext;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.sql.SparkSession;

/**
 * The entry point the materialized-view framework calls for {@code chunker} views: maps its
 * {@link ViewDefinition} and {@link RefreshOptions} to the chunker engine and the outcome back
 * to a {@link RefreshResult}.
 */
public final class ChunkerViews {
  private ChunkerViews() {}

  /** The chunker definition of a stored view. */
  public static ChunkerDefinition definition(ViewDefinition view) {
    if (view.kind() != MaterializedViewKind.CHUNKER) {
      throw new InvalidViewDefinitionException("View " + view.viewId() + " is a "
          + view.kind().wire() + " view, not a chunker view");
    }
    ChunkerFunctions.check(view.function().envelope().className(),
        view.function().envelope().batch());
    return ChunkerDefinition.of(view.sourceQuery(), view.function().envelope(),
        view.function().errorHandling());
  }

  /** Engine options; unset fields take the chunker defaults. */
  public static ChunkerRefreshOptions options(RefreshOptions o, String jobId,
      RefreshListener listener) {
    o.checkApplicableTo(MaterializedViewKind.CHUNKER);
    ChunkerRefreshOptions.Builder b = ChunkerRefreshOptions.builder().srcVersion(o.srcVersion())
        .concurrency(o.concurrency()).outputLimit(o.outputLimit()).jobId(jobId)
        .force(o.force()).listener(listener);
    if (o.sourceTaskSize() != null) {
      b.sourceTaskSize(o.sourceTaskSize());
    }
    if (o.intraApplierConcurrency() != null) {
      b.intraApplierConcurrency(o.intraApplierConcurrency());
    }
    if (o.maxRowsPerFragment() != null) {
      b.maxRowsPerFragment(o.maxRowsPerFragment());
    }
    return b.build();
  }

  /** Refreshes a chunker view whose source and table are at {@code tables}. */
  public static RefreshResult refresh(SparkSession spark, ChunkerRefresh.Tables tables,
      ViewDefinition view, RefreshOptions options, RefreshListener listener) {
    String jobId = options.jobId() == null ? UUID.randomUUID().toString() : options.jobId();
    return refresh(new RefreshContext(spark, tables.viewName(), jobId, listener), tables, view,
        options);
  }

  /** Refreshes a chunker view in {@code ctx} (its job id, listener and job). */
  public static RefreshResult refresh(RefreshContext ctx, ChunkerRefresh.Tables tables,
      ViewDefinition view, RefreshOptions options) {
    String jobId = ctx.jobId();
    ChunkerRefreshResult r = ChunkerRefresh.run(ctx, tables, definition(view),
        options(options, jobId, ctx.listener()));
    Map<String, Long> details = new LinkedHashMap<>();
    details.put("parents_expanded", r.parentsExpanded());
    details.put("parents_without_children", r.parentsWithoutChildren());
    details.put("parents_removed", r.parentsRemoved());
    details.put("fragments_written", (long) r.fragmentsWritten());
    return new RefreshResult(jobId, r.status(), MaterializedViewKind.CHUNKER, r.sourceVersion(),
        r.rowsInserted(), r.rowsDeleted(), r.skipped().size(), r.durationMs(), details);
  }
}
