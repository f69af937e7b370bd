package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.layout.VectorColumns;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The columns of a query view and how its rows are computed from the source:
 * {@code __source_row_id} (the source row's stable {@code _rowid}), {@code __is_set} (always
 * true: the row's projection is computed), then the projected columns in definition order.
 */
public final class QueryLayout {
  private QueryLayout() {}

  /** The source table at {@code version} ({@code null}: latest), read by path via lance-spark. */
  public static Dataset<Row> readSource(SparkSession spark, String location,
      Map<String, String> storageOptions, Long version) {
    return io.lancerest.spark.mv.fragments.LanceReads.load(spark, location, storageOptions, version);
  }

  /** {@link #readSource(SparkSession, String, Map, Long)} of a resolved table. */
  public static Dataset<Row> readSource(SparkSession spark, LanceLocation table, Long version) {
    return io.lancerest.spark.mv.fragments.LanceReads.load(spark, table, version);
  }

  /** {@link #readSource} reading {@code batchRows} rows a batch. */
  static Dataset<Row> readSource(SparkSession spark, LanceLocation table, Long version,
      int batchRows) {
    return io.lancerest.spark.mv.fragments.LanceReads.load(spark, table, version, batchRows);
  }

  /** {@link #readSource} reading {@code batchRows} rows a batch. */
  static Dataset<Row> readSource(SparkSession spark, String location,
      Map<String, String> storageOptions, Long version, int batchRows) {
    return io.lancerest.spark.mv.fragments.LanceReads.load(spark, location, storageOptions, version,
        batchRows);
  }

  /** The filtered source. */
  static Dataset<Row> filtered(Dataset<Row> source, SourceQuery q) {
    return q.filter() == null ? source : source.where(q.filter());
  }

  /**
   * {@code [__source_row_id, __is_set, projection...]} of the filtered source; with {@code
   * target}, each projected column is cast to the view column's type where they differ.
   */
  public static Dataset<Row> project(Dataset<Row> source, SourceQuery q, StructType target,
      String viewName) {
    return project(source, q, target, viewName, new Column[0]);
  }

  /** As {@link #project(Dataset, SourceQuery, StructType, String)}, {@code extra} columns last. */
  static Dataset<Row> project(Dataset<Row> source, SourceQuery q, StructType target,
      String viewName, Column... extra) {
    if (target != null) {
      requireColumns(q, target, viewName);
    }
    List<Column> cols = new ArrayList<>();
    cols.add(functions.col("_rowid").as(GenevaLayout.SOURCE_ROW_ID));
    cols.add(functions.lit(true).as(GenevaLayout.IS_SET));
    for (SourceQuery.OutputColumn c : q.projection()) {
      cols.add(functions.expr(c.expr()).as(c.name()));
    }
    if (target != null) {
      // Cast only where the types differ: an uncast column keeps its analysed metadata, so a
      // source vector arrives with its size and its write needs no per-row check (VectorRows).
      StructType analysed = analysed(source, q, cols, viewName);
      for (int i = 2; i < cols.size(); i++) {
        if (!DataType.equalsIgnoreNullability(analysed.fields()[i].dataType(),
            target.fields()[i].dataType())) {
          cols.set(i, functions.expr(q.projection().get(i - 2).expr())
              .cast(target.fields()[i].dataType()).as(q.projection().get(i - 2).name()));
        }
      }
    }
    cols.addAll(List.of(extra));
    return analysedDataset(source, q, cols, viewName);
  }

  private static StructType analysed(Dataset<Row> source, SourceQuery q, List<Column> cols,
      String viewName) {
    return analysedDataset(source, q, cols, viewName).schema();
  }

  private static Dataset<Row> analysedDataset(Dataset<Row> source, SourceQuery q,
      List<Column> cols, String viewName) {
    try {
      return filtered(source, q).select(cols.toArray(new Column[0]));
    } catch (RuntimeException e) {
      throw new InvalidViewDefinitionException("The definition of view " + viewName
          + " no longer applies to its source table (" + e.getMessage().lines().findFirst()
          .orElse("") + "); the source's columns changed. Re-create the view", e);
    }
  }

  /**
   * Checks that the view table {@code target} still has the columns the definition projects,
   * in order (without building any Spark plan).
   *
   * @throws InvalidViewDefinitionException when the view table was altered
   */
  static void requireColumns(SourceQuery q, StructType target, String viewName) {
    int i = 2;
    for (SourceQuery.OutputColumn c : q.projection()) {
      if (target.fields().length <= i || !target.fields()[i].name().equalsIgnoreCase(c.name())) {
        throw new InvalidViewDefinitionException("View " + viewName + " has columns "
            + List.of(target.fieldNames()) + " but its definition projects '" + c.name()
            + "' as column " + (i + 1) + "; the view table was altered. Re-create the view");
      }
      i++;
    }
    if (target.fields().length != i) {
      throw new InvalidViewDefinitionException("View " + viewName + " has columns "
          + List.of(target.fieldNames()) + " but its definition has " + q.projection().size()
          + " projected columns; the view table was altered. Re-create the view");
    }
  }

  /** The Spark schema of the view table for {@code q} over {@code source}. */
  public static StructType viewSchema(Dataset<Row> source, SourceQuery q, String viewName) {
    if (q.aggregation() != null) {
      return AggregateState.of(q, source, viewName).viewSchema(source);
    }
    StructType projected = project(source, q, null, viewName).schema();
    List<StructField> fields = new ArrayList<>();
    fields.add(DataTypes.createStructField(GenevaLayout.SOURCE_ROW_ID, DataTypes.LongType,
        false));
    fields.add(DataTypes.createStructField(GenevaLayout.IS_SET, DataTypes.BooleanType, false));
    for (int i = 2; i < projected.fields().length; i++) {
      StructField f = projected.fields()[i];
      // a source vector stays one: its size rides on the analysed column's metadata
      fields.add(DataTypes.createStructField(f.name(), f.dataType(), f.nullable(),
          VectorColumns.inherited(f)));
    }
    return DataTypes.createStructType(fields);
  }
}
