package io.lancerest.spark.mv.udtf;

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
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;

/**
 * What the materialized-view framework calls for {@code udtf} views at CREATE: the engine's
 * definition of a stored view, the output schema of a view created without one, and the
 * checks that need the source (the vector index of PARTITION BY INDEXED); refresh runs
 * {@link UdtfRefresh}.
 */
public final class UdtfViews implements ViewKind {
  public static final UdtfViews KIND = new UdtfViews();

  /** OPTIONS key for an explicit output schema as Spark DDL ({@code "k INT, n BIGINT"}). */
  public static final String OUTPUT_SCHEMA_OPTION = "output_schema";

  private UdtfViews() {}

  @Override
  public MaterializedViewKind kind() {
    return MaterializedViewKind.UDTF;
  }

  @Override
  public void validate(String viewName, ViewDefinition def, LanceLocation source) {
    validateCreate(def, source);
  }

  /** The function's declared output: the UDTF's rows are the view's rows. */
  @Override
  public Schema viewSchema(ViewDefinition def, Dataset<Row> source, StructType queryView) {
    return def.function().envelope().outputSchema();
  }

  @Override
  public RefreshPlan explain(SparkSession spark, ViewTables tables, ViewDefinition def,
      RefreshOptions options) {
    return UdtfRefresh.explain(spark, tables, def.sourceQuery(), UdtfDefinition.of(def.function()),
        options);
  }

  @Override
  public RefreshResult refresh(RefreshContext ctx, ViewTables tables, ViewDefinition def,
      RefreshOptions options) {
    return UdtfRefresh.run(ctx, tables, def.sourceQuery(), UdtfDefinition.of(def.function()),
        options);
  }

  /** The UDTF definition of a stored view; the class must be a {@link BatchUdtf}. */
  public static UdtfDefinition definition(ViewDefinition view) {
    if (view.kind() != MaterializedViewKind.UDTF) {
      throw new InvalidViewDefinitionException("View " + Identifiers.display(view.viewId())
          + " is a " + view.kind().wire() + " view, not a udtf view");
    }
    UdtfDefinition def = UdtfDefinition.of(view.function());
    UdtfRefresh.instantiate(def.className(), def.name());
    return def;
  }

  /**
   * CREATE-time checks that need the source: the class, and for PARTITION BY INDEXED a usable
   * vector index on the source (its absence is an error naming the column).
   */
  public static void validateCreate(ViewDefinition view, LanceLocation source) {
    UdtfDefinition def = definition(view);
    if (def.partitionByIndexedColumn() != null) {
      IvfPartitions.inspect(source, null, def.partitionByIndexedColumn());
    }
  }
}
