package io.lancerest.spark.mv.udtf;

import io.lancerest.client.Identifiers;
import io.lancerest.spark.mv.InvalidViewDefinitionException;
import io.lancerest.spark.mv.MaterializedViewKind;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.RefreshPlan;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.ViewDefinition;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewKind;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;

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
  public void validate(ViewDefinition def, String sourceUri, Map<String, String> storage) {
    validateCreate(def, sourceUri, storage);
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
   * The output schema of a view being created: {@code options.output_schema} (Spark DDL) when
   * given, else what the class reports through {@link BatchUdtf#outputSchema} for the input it
   * will see (the input columns of {@code sourceQuerySchema}, plus {@code _partition_id int32}
   * under PARTITION BY INDEXED).
   */
  public static Schema outputSchema(String className, StructType sourceQuerySchema,
      List<String> inputColumns, String partitionByIndexedColumn, Map<String, String> options) {
    BatchUdtf udtf = UdtfRefresh.instantiate(className, className);
    StructType declared;
    String ddl = options.get(OUTPUT_SCHEMA_OPTION);
    if (ddl != null) {
      try {
        declared = StructType.fromDDL(ddl);
      } catch (RuntimeException e) {
        throw new UdtfValidationException("OPTIONS " + OUTPUT_SCHEMA_OPTION + " '" + ddl
            + "' is not a Spark DDL column list (e.g. 'k INT, n BIGINT'): " + e.getMessage(), e);
      }
    } else {
      declared = udtf.outputSchema(inputSchema(sourceQuerySchema, inputColumns,
          partitionByIndexedColumn), options);
      if (declared == null) {
        throw new UdtfValidationException("UDTF class " + className + " does not report its "
            + "output schema; declare it with OPTIONS (" + OUTPUT_SCHEMA_OPTION
            + " = '<col> <type>, ...')");
      }
    }
    return LanceArrowUtils.toArrowSchema(declared, "UTC", true);
  }

  private static StructType inputSchema(StructType source, List<String> inputColumns,
      String indexed) {
    List<StructField> fields = new ArrayList<>();
    if (inputColumns == null) {
      fields.addAll(List.of(source.fields()));
    } else {
      for (String c : inputColumns) {
        if (!List.of(source.fieldNames()).contains(c)) {
          throw new UdtfValidationException("Input column '" + c + "' is not produced by the "
              + "source query (its columns are " + List.of(source.fieldNames()) + ")");
        }
        fields.add(source.apply(c));
      }
    }
    if (indexed != null) {
      fields.add(new StructField(IvfPartitions.PARTITION_ID, DataTypes.IntegerType, false,
          org.apache.spark.sql.types.Metadata.empty()));
    }
    return new StructType(fields.toArray(StructField[]::new));
  }

  /**
   * CREATE-time checks that need the source: the class, and for PARTITION BY INDEXED a usable
   * vector index on the source (its absence is an error naming the column).
   */
  public static void validateCreate(ViewDefinition view, String sourceUri,
      Map<String, String> sourceStorageOptions) {
    UdtfDefinition def = definition(view);
    if (def.partitionByIndexedColumn() != null) {
      IvfPartitions.inspect(sourceUri, sourceStorageOptions, null,
          def.partitionByIndexedColumn());
    }
  }
}
