package io.lancerest.spark.mv.chunker;

import io.lancerest.client.Identifiers;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewKind;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;

/**
 * The entry point the materialized-view framework calls for {@code chunker} views: maps its
 * {@link ViewDefinition} and {@link RefreshOptions} to the chunker engine and the outcome back
 * to a {@link RefreshResult}.
 */
public final class ChunkerViews implements ViewKind {
  public static final ChunkerViews KIND = new ChunkerViews();

  private ChunkerViews() {}

  @Override
  public MaterializedViewKind kind() {
    return MaterializedViewKind.CHUNKER;
  }

  /** The class is a chunker and accepts its options; the source query has no LIMIT. */
  @Override
  public void validate(String viewName, ViewDefinition def, LanceLocation source) {
    if (def.sourceQuery().limit() != null) {
      throw new InvalidViewDefinitionException("Chunker view " + viewName + " cannot LIMIT its "
          + "source rows; cap its rows with the refresh option output_limit");
    }
    definition(def);
  }

  @Override
  public Schema viewSchema(ViewDefinition def, Dataset<Row> source, StructType queryView) {
    return ChunkerRefresh.viewSchema(source, definition(def));
  }

  @Override
  public RefreshPlan explain(SparkSession spark, ViewTables tables, ViewDefinition def,
      RefreshOptions options) {
    return ChunkerRefresh.explain(spark, tables, definition(def), options);
  }

  @Override
  public RefreshResult refresh(RefreshContext ctx, ViewTables tables, ViewDefinition def,
      RefreshOptions options) {
    String jobId = ctx.jobId();
    ChunkerRefreshResult r = ChunkerRefresh.run(ctx, tables, definition(def), options);
    Map<String, Long> details = new LinkedHashMap<>();
    details.put("parents_expanded", r.parentsExpanded());
    details.put("parents_without_children", r.parentsWithoutChildren());
    details.put("parents_removed", r.parentsRemoved());
    details.put("fragments_written", (long) r.fragmentsWritten());
    return new RefreshResult(jobId, r.status(), MaterializedViewKind.CHUNKER, r.sourceVersion(),
        r.rowsInserted(), r.rowsDeleted(), r.skipped().size(), r.durationMs(), details);
  }

  /** The chunker definition of a stored view. */
  public static ChunkerDefinition definition(ViewDefinition view) {
    if (view.kind() != MaterializedViewKind.CHUNKER) {
      throw new InvalidViewDefinitionException("View " + Identifiers.display(view.viewId())
          + " is a "
          + view.kind().wire() + " view, not a chunker view");
    }
    ChunkerFunctions.check(view.function().envelope().className(),
        view.function().envelope().batch());
    return ChunkerDefinition.of(view.sourceQuery(), view.function().envelope(),
        view.function().errorHandling());
  }
}
