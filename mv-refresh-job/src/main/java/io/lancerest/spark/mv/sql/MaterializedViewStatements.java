package io.lancerest.spark.mv.sql;

import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.indexes.IndexListing;
import io.lancerest.spark.mv.indexes.IndexSummary;
import io.lancerest.spark.mv.layout.VectorColumns;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.ViewDescription;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
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
  /** Columns of SHOW JOBS and CANCEL JOB. */
  public static final StructType OPTIMIZE_OUTPUT = new StructType()
      .add("fragments_before", DataTypes.IntegerType, false)
      .add("fragments_after", DataTypes.IntegerType, false)
      .add("versions_removed", DataTypes.LongType, false)
      .add("bytes_removed", DataTypes.LongType, false);

  public static final StructType JOBS_OUTPUT = new StructType()
      .add("job_id", DataTypes.StringType, false)
      .add("view", DataTypes.StringType)
      .add("kind", DataTypes.StringType)
      .add("status", DataTypes.StringType, false)
      .add("source_version", DataTypes.LongType)
      .add("started_at", DataTypes.TimestampType)
      .add("finished_at", DataTypes.TimestampType)
      .add("progress", DataTypes.StringType)
      .add("rows_inserted", DataTypes.LongType, false)
      .add("rows_deleted", DataTypes.LongType, false)
      .add("skipped", DataTypes.LongType, false)
      .add("message", DataTypes.StringType);
  public static final StructType NO_OUTPUT = new StructType();

  private MaterializedViewStatements() {}

  static StructType outputSchema(MvStatement s) {
    if (s instanceof MvStatement.Create || s instanceof MvStatement.Refresh) {
      return REFRESH_OUTPUT;
    }
    if (s instanceof MvStatement.Show) {
      return SHOW_OUTPUT;
    }
    if (s instanceof MvStatement.Describe || s instanceof MvStatement.ExplainRefresh
        || s instanceof MvStatement.DescribeJob) {
      return DESCRIBE_OUTPUT;
    }
    if (s instanceof MvStatement.ShowJobs || s instanceof MvStatement.CancelJob) {
      return JOBS_OUTPUT;
    }
    if (s instanceof MvStatement.Optimize) {
      return OPTIMIZE_OUTPUT;
    }
    if (s instanceof MvStatement.CreateVectorIndex) {
      return VectorIndexes.OUTPUT;
    }
    if (s instanceof MvStatement.ShowIndexes) {
      return TableIndexes.OUTPUT;
    }
    if (s instanceof MvStatement.BackfillColumn) {
      return ComputedColumnSql.BACKFILL_OUTPUT;
    }
    return NO_OUTPUT;
  }

  /** A multipart name split into the catalog and the catalog-relative identifier. */
  record Resolved(String catalog, List<String> id) {}

  /** A CREATE MATERIALIZED VIEW statement as the engine's request, in the catalog it names. */
  public record CreateStatement(String catalog, CreateViewRequest request) {}

  /**
   * Parses {@code sql}, which must be one CREATE MATERIALIZED VIEW statement, with names
   * resolved as running it in {@code spark} would resolve them; nothing is run.
   */
  public static CreateStatement parseCreate(SparkSession spark, String sql) {
    MvStatement s = null;
    if (MvStatementParser.handles(sql)) {
      try {
        s = MvStatementParser.parse(spark.sessionState().sqlParser(), sql);
      } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
        throw new MaterializedViewException("The statement does not parse: " + e.getMessage(),
            e);
      }
    }
    if (!(s instanceof MvStatement.Create c)) {
      throw new MaterializedViewException("Expected one CREATE MATERIALIZED VIEW statement, got: "
          + sql.strip().lines().findFirst().orElse(""));
    }
    return create(spark, c);
  }

  private static CreateStatement create(SparkSession spark, MvStatement.Create c) {
    Resolved r = resolveObject(spark, c.name());
    return new CreateStatement(r.catalog(), new CreateViewRequest(r.id(), c.ifNotExists(),
        c.kind(), c.query(), null, c.functionClass(), c.partitionBy(), c.partitionByIndexed(),
        c.options(), c.tableProperties(), c.withData()));
  }

  static List<Row> execute(SparkSession spark, MvStatement s) {
    if (s instanceof MvStatement.CreateVectorIndex ci) {
      return VectorIndexes.create(spark, ci);
    }
    if (s instanceof MvStatement.ShowIndexes si) {
      return TableIndexes.show(spark, si);
    }
    if (s instanceof MvStatement.AddComputedColumn a) {
      return ComputedColumnSql.add(spark, a);
    }
    if (s instanceof MvStatement.BackfillColumn b) {
      return ComputedColumnSql.backfill(spark, b);
    }
    if (s instanceof MvStatement.Create c) {
      CreateStatement cs = create(spark, c);
      RefreshResult res = MaterializedViews.forCatalog(spark, cs.catalog()).create(cs.request());
      return res == null ? List.of() : List.of(row(res));
    }
    if (s instanceof MvStatement.Refresh rf) {
      RefreshOptions options = RefreshOptions.fromMap(rf.options());
      Resolved r = resolveObject(spark, rf.name());
      MaterializedViews views = MaterializedViews.forCatalog(spark, r.catalog());
      return List.of(row(rf.async() ? views.refreshAsync(r.id(), options)
          : views.refresh(r.id(), options)));
    }
    if (s instanceof MvStatement.Optimize o) {
      Resolved r = resolveObject(spark, o.name());
      io.lancerest.spark.mv.result.MaintenanceResult m = MaterializedViews.forCatalog(spark,
          r.catalog()).optimize(r.id());
      return List.of(RowFactory.create(m.fragmentsBefore(), m.fragmentsAfter(),
          m.versionsRemoved(), m.bytesRemoved()));
    }
    if (s instanceof MvStatement.ShowJobs sj) {
      String catalog = sj.catalog();
      List<String> view = null;
      if (sj.view() != null) {
        Resolved r = resolveObject(spark, sj.view());
        if (catalog != null && !catalog.equals(r.catalog())) {
          throw new MaterializedViewException("SHOW JOBS IN " + catalog + " FOR "
              + String.join(".", sj.view()) + ": the view is in catalog '" + r.catalog()
              + "'; name one catalog");
        }
        catalog = r.catalog();
        view = r.id();
      }
      List<Row> rows = new ArrayList<>();
      for (JobRecord j : MaterializedViews.forCatalog(spark, catalogOrCurrent(spark, catalog))
          .jobs(view, sj.limit() == null ? Integer.MAX_VALUE : sj.limit())) {
        rows.add(jobRow(j));
      }
      return rows;
    }
    if (s instanceof MvStatement.DescribeJob dj) {
      if (dj.view() != null) {
        Resolved r = resolveObject(spark, dj.view());
        return describeJobRows(MaterializedViews.forCatalog(spark, r.catalog())
            .job(r.id(), dj.jobId()));
      }
      return describeJobRows(MaterializedViews.forCatalog(spark,
          JobCatalogs.of(spark, dj.catalog(), dj.jobId(), "DESCRIBE JOB")).job(dj.jobId()));
    }
    if (s instanceof MvStatement.CancelJob cj) {
      if (cj.view() != null) {
        Resolved r = resolveObject(spark, cj.view());
        return List.of(jobRow(MaterializedViews.forCatalog(spark, r.catalog())
            .cancel(r.id(), cj.jobId())));
      }
      return List.of(jobRow(MaterializedViews.forCatalog(spark,
          JobCatalogs.of(spark, cj.catalog(), cj.jobId(), "CANCEL JOB")).cancel(cj.jobId())));
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
    ViewDescription d = MaterializedViews.forCatalog(spark, r.catalog()).describe(r.id());
    List<Row> rows = describeRows(d);
    rows.add(RowFactory.create("Vector columns", vectorColumns(spark, r)));
    List<String> full = new ArrayList<>();
    full.add(r.catalog());
    full.addAll(r.id());
    rows.addAll(indexRows(d.indexes(), io.lancerest.client.Identifiers.display(full)));
    return rows;
  }

  /**
   * DESCRIBE MATERIALIZED VIEW's Indexes section: {@code Indexes} with their number (or {@code
   * none}), then a row {@code Index <name>} per index: its type, columns, rows indexed and not,
   * segments. When they cannot be listed, {@code Indexes} says why, and the rest of the
   * description stands.
   */
  static List<Row> indexRows(IndexListing listing, String view) {
    List<Row> rows = new ArrayList<>();
    if (listing.unavailable() != null) {
      rows.add(RowFactory.create("Indexes", "unavailable: " + listing.unavailable()
          + "; SHOW INDEXES FROM " + view + (listing.equals(IndexListing.NOT_SUPPORTED)
          ? " lists them" : " gives the error")));
      return rows;
    }
    rows.add(RowFactory.create("Indexes", listing.indexes().isEmpty() ? "none"
        : Integer.toString(listing.indexes().size())));
    for (IndexSummary i : listing.indexes()) {
      rows.add(RowFactory.create("Index " + i.name(), i.summary()));
    }
    return rows;
  }

  /**
   * The view's vector columns with their sizes, e.g. {@code emb (384 floats)}, or {@code none}:
   * Spark shows a vector as {@code array<float>}, so DESCRIBE says which ones an index accepts.
   */
  static String vectorColumns(StructType schema) {
    List<String> out = new ArrayList<>();
    for (StructField f : schema.fields()) {
      Integer n = VectorColumns.size(f);
      if (n != null) {
        out.add(f.name() + " (" + n + " floats)");
      }
    }
    return out.isEmpty() ? "none" : String.join(", ", out);
  }

  /**
   * {@link #vectorColumns(StructType)} of the view's table as this session's catalog reads it;
   * a client that cannot read the table (a server-managed view) still gets the other rows.
   */
  private static String vectorColumns(SparkSession spark, Resolved r) {
    try {
      return vectorColumns(spark.table(quoted(r)).schema());
    } catch (Exception e) { // Spark's AnalysisException is checked, and thrown undeclared
      return "unknown: the view's table cannot be read here (" + e.getClass().getSimpleName()
          + ")";
    }
  }

  private static String quoted(Resolved r) {
    List<String> parts = new ArrayList<>();
    parts.add(r.catalog());
    parts.addAll(r.id());
    return parts.stream().map(p -> "`" + p.replace("`", "``") + "`")
        .collect(java.util.stream.Collectors.joining("."));
  }

  static Row row(RefreshResult r) {
    // A server-managed refresh of a view whose table this client cannot read has no known kind.
    return RowFactory.create(r.jobId(), r.status().name(),
        r.kind() == null ? "unknown" : r.kind().wire(), r.sourceVersion(),
        r.rowsInserted(), r.rowsDeleted(), r.skipped(), r.durationMs());
  }

  private static String catalogOrCurrent(SparkSession spark, String catalog) {
    return catalog != null ? catalog
        : spark.sessionState().catalogManager().currentCatalog().name();
  }

  static Row jobRow(JobRecord j) {
    return RowFactory.create(j.jobId(), j.view(), j.kind(), j.status().name(),
        j.sourceVersion(), new java.sql.Timestamp(j.startedAt()),
        j.finishedAt() == null ? null : new java.sql.Timestamp(j.finishedAt()), j.progress(),
        j.rowsInserted(), j.rowsDeleted(), j.skipped(), j.message());
  }

  static List<Row> describeJobRows(JobRecord j) {
    List<Row> rows = new ArrayList<>();
    rows.add(RowFactory.create("Job ID", j.jobId()));
    rows.add(RowFactory.create("View", j.view()));
    rows.add(RowFactory.create("Kind", j.kind()));
    rows.add(RowFactory.create("Status", j.status().name()));
    rows.add(RowFactory.create("Source version",
        j.sourceVersion() == null ? null : j.sourceVersion().toString()));
    rows.add(RowFactory.create("Started at", java.time.Instant.ofEpochMilli(j.startedAt())
        .toString()));
    rows.add(RowFactory.create("Finished at", j.finishedAt() == null ? null
        : java.time.Instant.ofEpochMilli(j.finishedAt()).toString()));
    rows.add(RowFactory.create("Heartbeat", java.time.Instant.ofEpochMilli(j.heartbeatAt())
        .toString()));
    rows.add(RowFactory.create("Progress", j.progress()));
    rows.add(RowFactory.create("Tasks done", Long.toString(j.itemsDone())));
    rows.add(RowFactory.create("Tasks total", Long.toString(j.itemsTotal())));
    rows.add(RowFactory.create("Rows written", Long.toString(j.rowsWritten())));
    rows.add(RowFactory.create("Rows inserted", Long.toString(j.rowsInserted())));
    rows.add(RowFactory.create("Rows deleted", Long.toString(j.rowsDeleted())));
    rows.add(RowFactory.create("Skipped", Long.toString(j.skipped())));
    rows.add(RowFactory.create("Message", j.message()));
    rows.add(RowFactory.create("Spark application", j.applicationId()));
    rows.add(RowFactory.create("Launched by", j.launchedBy()));
    return rows;
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
