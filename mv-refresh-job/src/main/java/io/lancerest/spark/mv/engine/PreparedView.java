package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewAlreadyExistsException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.layout.VectorColumns;
import io.lancerest.spark.mv.query.QueryLayout;
import io.lancerest.spark.mv.query.SelectAnalysis;
import io.lancerest.spark.mv.query.SourceQuerySql;
import io.lancerest.spark.mv.query.StableRowIds;
import io.lancerest.spark.mv.refresh.ViewKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything a CREATE MATERIALIZED VIEW checks and computes before anything is created: the
 * options, the source and its stable row ids, the definition and the view's schemas.
 *
 * @param source where the source lives, as described once for this CREATE: its first refresh
 *     reads the same location with the same storage options
 */
record PreparedView(ViewDefinition definition, StructType viewSchema, Schema arrowSchema,
    Long outputLimit, Map<String, String> tableProperties, TableLocation source) {
  // The engine's log category, which operators already filter on.
  private static final Logger LOG = LoggerFactory.getLogger(EngineViews.class);

  /** The checked request; {@code null} when the view exists and the CREATE said IF NOT EXISTS. */
  static PreparedView prepare(SparkSession spark, CatalogBinding cat, CreateViewRequest r,
      String viewName) {
    return prepare(spark, cat, r, viewName, true);
  }

  /**
   * @param creating whether the view is about to be created: then an existing one is refused
   *     (or, under IF NOT EXISTS, answered {@code null}); else only the request is derived
   */
  static PreparedView prepare(SparkSession spark, CatalogBinding cat, CreateViewRequest r,
      String viewName, boolean creating) {
    MaterializedViewKind kind = r.kind();
    Map<String, String> options = FunctionOptions.normalized(r.options());
    Long outputLimit = null;
    if (options.containsKey(FunctionOptions.OUTPUT_LIMIT)) {
      if (kind != MaterializedViewKind.CHUNKER) {
        throw new InvalidOptionException("output_limit caps the rows of a chunker view; "
            + viewName + " is a " + kind.wire() + " view. Remove output_limit"
            + (kind == MaterializedViewKind.QUERY ? " (use LIMIT in the SELECT)" : ""));
      }
      try {
        outputLimit = Long.parseLong(options.get(FunctionOptions.OUTPUT_LIMIT).trim());
      } catch (NumberFormatException e) {
        throw new InvalidOptionException(FunctionOptions.OUTPUT_LIMIT,
            options.get(FunctionOptions.OUTPUT_LIMIT), "a whole number")
            .withSuffix(" (view " + viewName + ")");
      }
    }
    if (kind == MaterializedViewKind.QUERY) {
      if (r.partitionBy() != null || r.partitionByIndexedColumn() != null) {
        throw new InvalidViewDefinitionException("PARTITION BY is for UDTF views; query view "
            + viewName + " is 1:1 with its source rows");
      }
      FunctionOptions.checkQueryView(options, viewName);
    }
    boolean autoRefresh;
    try {
      autoRefresh = options.containsKey(FunctionOptions.AUTO_REFRESH)
          && FunctionOptions.bool(FunctionOptions.AUTO_REFRESH,
              options.get(FunctionOptions.AUTO_REFRESH));
    } catch (InvalidOptionException e) {
      throw e.withSuffix(" (view " + viewName + ")");
    }
    if (creating && viewExists(cat, r.viewId())) {
      if (r.ifNotExists()) {
        LOG.info("View {} exists; IF NOT EXISTS: nothing to do", viewName);
        return null;
      }
      throw new MaterializedViewAlreadyExistsException("Cannot create materialized view "
          + viewName + ": a table or view with that name already exists. Drop it first "
          + "(DROP MATERIALIZED VIEW " + viewName + ") or use CREATE MATERIALIZED VIEW IF NOT "
          + "EXISTS");
    }
    // The source query and where the source lives. A source query given as such is analyzed
    // as the SELECT it stands for, so that it is checked exactly as one written in SQL.
    String selectSql = r.selectSql() != null ? r.selectSql() : SourceQuerySql.select(
        r.sourceQuery(), cat.name(), cat.relativeId(r.sourceQuery().sourceTableId()));
    SelectAnalysis.Analyzed a = SelectAnalysis.analyze(spark, selectSql, kind, viewName);
    if (!a.catalogName().equals(cat.name())) {
      throw new InvalidViewDefinitionException("The source of view " + viewName + " is in "
          + "catalog '" + a.catalogName() + "'; a materialized view reads a table of its own "
          + "catalog '" + cat.name() + "'");
    }
    List<String> sourceRelative = a.sourceRelativeId();
    List<String> ns = sourceRelative.subList(0, sourceRelative.size() - 1);
    SourceQuery query = a.aggregation() == null
        ? SourceQuery.of(cat.serverId(sourceRelative), ns, a.projection(), a.filter(),
            a.limit())
        : SourceQuery.grouped(cat.serverId(sourceRelative), ns, a.projection(), a.filter(),
            a.aggregation());
    TableLocation source = cat.locate(sourceRelative, "source table of view " + viewName);
    if (kind.incremental()) {
      requireStableRowIds(cat, source, viewName);
    }
    Dataset<Row> sourceDf = QueryLayout.readSource(spark, source.location(),
        source.storageOptions(), null);
    // Vector sizes declared for the view's columns: a query view's computed columns take them
    // here, a function's outputs in its output schema; the table properties keep them too.
    Map<String, Integer> vectorSizes = VectorColumns.declared(r.tableProperties(), viewName);
    if (a.aggregation() != null) {
      VectorColumns.refuseOnAggregate(vectorSizes, viewName);
    }
    StructType queryView = QueryLayout.viewSchema(sourceDf, query, viewName);
    StructType selected = new StructType(Arrays.copyOfRange(queryView.fields(), 2,
        queryView.fields().length));
    if (kind == MaterializedViewKind.QUERY) {
      queryView = VectorColumns.declare(queryView, vectorSizes, viewName);
    }
    FunctionSpec function = kind == MaterializedViewKind.QUERY ? null
        : FunctionOptions.build(kind, r.functionClass(), r.partitionBy(),
            r.partitionByIndexedColumn(), options, selected, vectorSizes, viewName);
    ViewDefinition def = new ViewDefinition(cat.serverId(r.viewId()), kind, query, function,
        autoRefresh);
    ViewKind viewKind = KindDispatch.of(kind);
    viewKind.validate(viewName, def, source.dataset());
    Schema arrow = viewKind.viewSchema(def, sourceDf, queryView);
    VectorColumns.check(arrow, vectorSizes, viewName);
    StructType viewSchema = kind == MaterializedViewKind.QUERY ? queryView
        : LanceArrowUtils.fromArrowSchema(plain(arrow));
    return new PreparedView(def, viewSchema, arrow, outputLimit, r.tableProperties(),
        source);
  }

  private static boolean viewExists(CatalogBinding cat, List<String> viewId) {
    try {
      cat.locate(viewId, "view");
      return true;
    } catch (MaterializedViewNotFoundException e) {
      return false;
    }
  }

  private static void requireStableRowIds(CatalogBinding cat, TableLocation source,
      String viewName) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = source.dataset().open(a, null)) {
      if (Boolean.FALSE.equals(StableRowIds.of(ds))) {
        throw new InvalidViewDefinitionException(StableRowIds.missingMessage("view "
            + viewName, null).replace("<source>", cat.display(source.relativeId())));
      }
    }
  }

  private static Schema plain(Schema s) {
    List<Field> fields = new ArrayList<>();
    for (Field f : s.getFields()) {
      fields.add(new Field(f.getName(), new org.apache.arrow.vector.types.pojo.FieldType(
          f.isNullable(), f.getType(), f.getDictionary()), f.getChildren()));
    }
    return new Schema(fields);
  }
}
