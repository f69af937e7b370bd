package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewKind;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;

/** Query views as the framework sees them ({@link ViewKind}); the engine is {@link QueryRefresh}. */
public final class QueryViews implements ViewKind {
  public static final QueryViews KIND = new QueryViews();

  private QueryViews() {}

  @Override
  public MaterializedViewKind kind() {
    return MaterializedViewKind.QUERY;
  }

  /** Nothing beyond the shared checks: the SELECT was analyzed when the definition was made. */
  @Override
  public void validate(String viewName, ViewDefinition def, LanceLocation source) {}

  @Override
  public Schema viewSchema(ViewDefinition def, Dataset<Row> source, StructType queryView) {
    return LanceArrowUtils.toArrowSchema(queryView, "UTC", true);
  }

  @Override
  public RefreshPlan explain(SparkSession spark, ViewTables tables, ViewDefinition def,
      RefreshOptions options) {
    return QueryRefresh.explain(spark, tables, def.sourceQuery(), options);
  }

  @Override
  public RefreshResult refresh(RefreshContext ctx, ViewTables tables, ViewDefinition def,
      RefreshOptions options) {
    return QueryRefresh.run(ctx, tables, def.sourceQuery(), options);
  }
}
