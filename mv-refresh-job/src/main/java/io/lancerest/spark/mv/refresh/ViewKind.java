package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;

/**
 * One view kind as CREATE and REFRESH see it. The framework does everything else the same way
 * for every kind; a refresh runs through {@link RefreshDriver}, into which the kind plugs its
 * {@link ViewRefresh}.
 */
public interface ViewKind {
  MaterializedViewKind kind();

  /**
   * CREATE-time checks of a definition against its source, before anything is created: what the
   * kind needs of the definition and of the source, beyond the checks every kind shares.
   *
   * @param viewName the view as users name it ({@code catalog.ns.v}), for the errors
   */
  void validate(String viewName, ViewDefinition def, LanceLocation source);

  /**
   * The view table's schema.
   *
   * @param source the source table, read as refreshes read it
   * @param queryView the schema a query view of the same SELECT would have
   */
  Schema viewSchema(ViewDefinition def, Dataset<Row> source, StructType queryView);

  /** What a refresh would do now, with nothing written or committed (EXPLAIN REFRESH). */
  RefreshPlan explain(SparkSession spark, ViewTables tables, ViewDefinition def,
      RefreshOptions options);

  /** Refreshes the view in {@code ctx}: its job id, listener, caches and job record. */
  RefreshResult refresh(RefreshContext ctx, ViewTables tables, ViewDefinition def,
      RefreshOptions options);
}
