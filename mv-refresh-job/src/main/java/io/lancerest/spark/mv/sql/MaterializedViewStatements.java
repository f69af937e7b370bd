package io.lancerest.spark.mv.sql;

import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.ViewDefinition;
import io.lancerest.spark.mv.ViewDescription;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Runs a parsed statement against the {@link MaterializedViews} API of the catalog it names, and
 * shapes the result rows. Kept apart from the Spark plan node so it reads as plain Java.
 */
public final class MaterializedViewStatements {
  /** Columns of REFRESH (and of CREATE ... WITH DATA, which runs the first refresh). */
  public static final StructType REFRESH_OUTPUT = new StructType()
      .add("job_id", DataTypes.StringType)
      .add("status", DataTypes.StringType, false)
      .add("kind", DataTypes.StringType, false)
      .add("source_version", DataTypes.LongType)
      .add("rows_inserted", DataTypes.LongType, false)
      .add("rows_deleted", DataTypes.LongType, false)
      .add("skipped", DataTypes.LongType, false)
      .add("duration_ms", DataTypes.LongType, false);
  public static final StructType SHOW_OUTPUT = new StructType()
      .add("namespace", DataTypes.StringType, false)
      .add("view_name", DataTypes.StringType, false);
  public static final StructType DESCRIBE_OUTPUT = new StructType()
      .add("info_name", DataTypes.StringType, false)
      .add("info_value", DataTypes.StringType);
  public static final StructType NO_OUTPUT = new StructType();

  private MaterializedViewStatements() {}

  static StructType outputSchema(MvStatement s) {
    if (s instanceof MvStatement.Create || s instanceof MvStatement.Refresh) {
      return REFRESH_OUTPUT;
    }
    if (s instanceof MvStatement.Show) {
      return SHOW_OUTPUT;
    }
    if (s instanceof MvStatement.Describe || s instanceof MvStatement.ExplainRefresh) {
      return DESCRIBE_OUTPUT;
    }
    return NO_OUTPUT;
  }

  /** A multipart name split into the catalog and the catalog-relative identifier. */
  record Resolved(String catalog, List<String> id) {}

  static List<Row> execute(SparkSession spark, MvStatement s) {
    if (s instanceof MvStatement.Create c) {
      Resolved r = resolveObject(spark, c.name());
      RefreshResult res = MaterializedViews.forCatalog(spark, r.catalog()).create(
          new CreateViewRequest(r.id(), c.ifNotExists(), c.kind(), c.query(), null,
              c.functionClass(), c.partitionBy(), c.partitionByIndexed(), c.options(),
              c.tableProperties(), c.withData()));
      return res == null ? List.of() : List.of(row(res));
    }
    if (s instanceof MvStatement.Refresh rf) {
      RefreshOptions options = RefreshOptions.fromMap(rf.options());
      Resolved r = resolveObject(spark, rf.name());
      return List.of(row(MaterializedViews.forCatalog(spark, r.catalog())
          .refresh(r.id(), options)));
    }
    if (s instanceof MvStatement.ExplainRefresh ex) {
      RefreshOptions options = RefreshOptions.fromMap(ex.options());
      Resolved r = resolveObject(spark, ex.name());
      List<Row> rows = new ArrayList<>();
      for (String[] line : MaterializedViews.forCatalog(spark, r.catalog())
          .explainRefresh(r.id(), options).lines()) {
        rows.add(RowFactory.create(line[0], line[1]));
      }
      return rows;
    }
    if (s instanceof MvStatement.Drop d) {
      Resolved r = resolveObject(spark, d.name());
      MaterializedViews.forCatalog(spark, r.catalog()).drop(r.id(), d.ifExists());
      return List.of();
    }
    if (s instanceof MvStatement.Show sh) {
      Resolved r = resolveNamespace(spark, sh.namespace());
      List<Row> rows = new ArrayList<>();
      for (List<String> id : MaterializedViews.forCatalog(spark, r.catalog()).list(r.id())) {
        rows.add(RowFactory.create(String.join(".", id.subList(0, id.size() - 1)),
            id.get(id.size() - 1)));
      }
      return rows;
    }
    MvStatement.Describe de = (MvStatement.Describe) s;
    Resolved r = resolveObject(spark, de.name());
    return describeRows(MaterializedViews.forCatalog(spark, r.catalog()).describe(r.id()));
  }

  static Row row(RefreshResult r) {
    // A server-managed refresh of a view whose table this client cannot read has no known kind.
    return RowFactory.create(r.jobId(), r.status().name(),
        r.kind() == null ? "unknown" : r.kind().wire(), r.sourceVersion(),
        r.rowsInserted(), r.rowsDeleted(), r.skipped(), r.durationMs());
  }

  static List<Row> describeRows(ViewDescription d) {
    ViewDefinition def = d.definition();
    List<Row> rows = new ArrayList<>();
    rows.add(RowFactory.create("View", String.join(".", d.viewId())));
    rows.add(RowFactory.create("Kind", def.kind().wire()));
    rows.add(RowFactory.create("Mode", d.mode()));
    rows.add(RowFactory.create("Source", String.join(".", def.sourceQuery().sourceTableId())));
    rows.add(RowFactory.create("Definition", def.sourceQuery().toJson()));
    if (def.function() != null) {
      rows.add(RowFactory.create("Function", def.function().envelope().toJson()));
      rows.add(RowFactory.create("Function SHA-256", def.function().envelope().sha256Hex()));
    }
    Long refreshedTo = d.state().watermark() != null ? d.state().watermark()
        : lastJobSourceVersion(d.state().lastJob());
    rows.add(RowFactory.create("Last refreshed source version",
        refreshedTo == null ? null : refreshedTo.toString()));
    rows.add(RowFactory.create("Base table version",
        d.state().baseTableVersion() == null ? null : d.state().baseTableVersion().toString()));
    rows.add(RowFactory.create("Last job", d.state().lastJob()));
    return rows;
  }

  /**
   * The source version of the last refresh job, for kinds without a watermark (UDTF views are
   * rebuilt, so only the job records what they were refreshed to); null when unknown.
   */
  static Long lastJobSourceVersion(String lastJobJson) {
    if (lastJobJson == null) {
      return null;
    }
    try {
      com.fasterxml.jackson.databind.JsonNode v = io.lancerest.client.LanceJson.mapper()
          .readTree(lastJobJson).get("source_version");
      return v == null || !v.canConvertToLong() ? null : v.asLong();
    } catch (java.io.IOException | RuntimeException e) {
      return null;
    }
  }

  /** {@code cat.ns.v} → (cat, [ns, v]) when cat is a catalog; else the current catalog. */
  static Resolved resolveObject(SparkSession spark, List<String> name) {
    CatalogManager cm = spark.sessionState().catalogManager();
    if (name.size() >= 2 && cm.isCatalogRegistered(name.get(0))) {
      return new Resolved(name.get(0), name.subList(1, name.size()));
    }
    List<String> id = new ArrayList<>();
    if (name.size() == 1) {
      id.addAll(Arrays.asList(cm.currentNamespace()));
    }
    id.addAll(name);
    return new Resolved(cm.currentCatalog().name(), id);
  }

  static Resolved resolveNamespace(SparkSession spark, List<String> ns) {
    CatalogManager cm = spark.sessionState().catalogManager();
    if (ns == null) {
      return new Resolved(cm.currentCatalog().name(), Arrays.asList(cm.currentNamespace()));
    }
    if (cm.isCatalogRegistered(ns.get(0))) {
      return new Resolved(ns.get(0), ns.subList(1, ns.size()));
    }
    return new Resolved(cm.currentCatalog().name(), ns);
  }
}
