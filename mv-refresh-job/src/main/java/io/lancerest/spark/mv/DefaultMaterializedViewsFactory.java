package io.lancerest.spark.mv;

import org.apache.spark.sql.SparkSession;

/**
 * The default {@link MaterializedViews.Factory}. The engine behind it (server-managed and
 * client-managed modes over {@code LanceRestCatalog}) is being built; until it lands every
 * call says so instead of failing obscurely.
 */
public final class DefaultMaterializedViewsFactory implements MaterializedViews.Factory {
  @Override
  public MaterializedViews forCatalog(SparkSession spark, String catalogName) {
    throw new MaterializedViewException("Materialized views on catalog '" + catalogName
        + "' need the refresh engine, which is not available in this build yet");
  }
}
