package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.MaterializedViews;
import org.apache.spark.sql.SparkSession;

/**
 * The default {@link MaterializedViews.Factory}: the engine over a {@code LanceRestCatalog}
 * (server-managed or client-managed views, per the catalog's {@code mv.mode}).
 */
public final class DefaultMaterializedViewsFactory implements MaterializedViews.Factory {
  @Override
  public MaterializedViews forCatalog(SparkSession spark, String catalogName) {
    return new EngineViews(spark, CatalogBinding.of(spark, catalogName));
  }
}
