package io.lancerest.spark.mv.engine;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.error.AlreadyExistsException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.client.model.CreateMaterializedViewResponse;
import io.lancerest.client.model.DescribeMaterializedViewJobRequest;
import io.lancerest.client.model.MaterializedViewJob;
import io.lancerest.client.model.RefreshMaterializedViewResponse;
import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.FunctionSpec;
import io.lancerest.spark.mv.GenevaLayout;
import io.lancerest.spark.mv.InvalidOptionException;
import io.lancerest.spark.mv.InvalidViewDefinitionException;
import io.lancerest.spark.mv.JobRecord;
import io.lancerest.spark.mv.MaterializedViewAlreadyExistsException;
import io.lancerest.spark.mv.MaterializedViewException;
import io.lancerest.spark.mv.MaterializedViewKind;
import io.lancerest.spark.mv.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.RefreshPlan;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.SourceQuery;
import io.lancerest.spark.mv.ViewDefinition;
import io.lancerest.spark.mv.ViewDescription;
import io.lancerest.spark.mv.ViewState;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.maintenance.ViewMaintenance;
import io.lancerest.spark.mv.query.QueryLayout;
import io.lancerest.spark.mv.query.SelectAnalysis;
import io.lancerest.spark.mv.query.StableRowIds;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.ViewKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.ReadOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine behind {@link MaterializedViews} for one {@code LanceRestCatalog}: server-managed
 * views through the spec's CreateMaterializedView / RefreshMaterializedView, client-managed views
 * as catalog tables carrying their definition in the Geneva layout, refreshed in this Spark
 * session by {@link KindDispatch}. Mode: catalog option {@code mv.mode} ({@link MvMode}).
 */
public final class EngineViews implements MaterializedViews {
  private static final Logger LOG = LoggerFactory.getLogger(EngineViews.class);
  /** Dataset config keys that make the definition visible in DESCRIBE TABLE EXTENDED. */
  public static final String PROP_KIND = "materialized_view.kind";
  public static final String PROP_SOURCE = "materialized_view.source";
  public static final String PROP_DEFINITION = "materialized_view.definition";
  public static final String PROP_FUNCTION = "materialized_view.function";

  /**
   * Session conf the view service sets on its own session: the views it creates are marked
   * managed by it ({@link GenevaLayout#MANAGED_BY}), so that clients send it their refreshes.
   */
  public static final String MANAGED_BY_CONF = "spark.lancerest.mv.managedBy";
  /** How long {@code REFRESH ... WAIT} waits for a server's job (default 24h). */
  public static final String WAIT_TIMEOUT_CONF = "spark.lancerest.mv.waitTimeout";

  private final SparkSession spark;
  private final CatalogBinding cat;
  private final MvMode mode;
  private final EngineJobs jobs;

  public EngineViews(SparkSession spark, CatalogBinding cat) {
    this.spark = spark;
    this.cat = cat;
    this.mode = MvMode.parse(cat.options().mvMode(), cat.name());
    this.jobs = new EngineJobs(spark, cat, id -> {
      Stored s = read(id);
      return s == null ? null : s.state().lastJob();
    });
  }

  public MvMode mode() {
    return mode;
  }

  // ---------------------------------------------------------------- create

  @Override
  public RefreshResult create(CreateViewRequest r) {
    long started = System.currentTimeMillis();
    String viewName = cat.display(r.viewId());
    Prepared p = prepare(r, viewName);
    if (p == null) {
      return null; // IF NOT EXISTS and it exists
    }
    if (mode != MvMode.CLIENT) {
      try {
        return createOnServer(r, p, started);
      } catch (UnsupportedOperationByServerException e) {
        if (mode == MvMode.SERVER) {
          throw new MaterializedViewException("The server at " + cat.client().config().uri()
              + " does not implement CreateMaterializedView, and catalog '" + cat.name()
              + "' has mv.mode = server. Set mv.mode = auto or client to keep the view on the "
              + "client side", e);
        }
        LOG.info("Server has no materialized-view endpoints ({}); view {} is client-managed",
            e.getMessage(), viewName);
      }
    }
    return createOnClient(r, p);
  }

  /** Everything checked and computed before anything is created. */
  private record Prepared(ViewDefinition definition, StructType viewSchema, Schema arrowSchema,
      Long outputLimit, Map<String, String> tableProperties) {}

  private Prepared prepare(CreateViewRequest r, String viewName) {
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
    if (viewExists(r.viewId())) {
      if (r.ifNotExists()) {
        LOG.info("View {} exists; IF NOT EXISTS: nothing to do", viewName);
        return null;
      }
      throw new MaterializedViewAlreadyExistsException("Cannot create materialized view "
          + viewName + ": a table or view with that name already exists. Drop it first "
          + "(DROP MATERIALIZED VIEW " + viewName + ") or use CREATE MATERIALIZED VIEW IF NOT "
          + "EXISTS");
    }
    // The source query and where the source lives
    SourceQuery query;
    List<String> sourceRelative;
    if (r.selectSql() != null) {
      SelectAnalysis.Analyzed a = SelectAnalysis.analyze(spark, r.selectSql(), kind, viewName);
      if (!a.catalogName().equals(cat.name())) {
        throw new InvalidViewDefinitionException("The source of view " + viewName + " is in "
            + "catalog '" + a.catalogName() + "'; a materialized view reads a table of its own "
            + "catalog '" + cat.name() + "'");
      }
      sourceRelative = a.sourceRelativeId();
      query = SourceQuery.of(cat.serverId(sourceRelative),
          sourceRelative.subList(0, sourceRelative.size() - 1), a.projection(), a.filter(),
          a.limit());
    } else {
      query = r.sourceQuery();
      sourceRelative = cat.relativeId(query.sourceTableId());
    }
    TableLocation source = cat.locate(sourceRelative, "source table of view " + viewName);
    if (kind.incremental()) {
      requireStableRowIds(source, viewName);
    }
    Dataset<Row> sourceDf = QueryLayout.readSource(spark, source.location(),
        source.storageOptions(), null);
    if (query.projection().isEmpty()) {
      List<SourceQuery.OutputColumn> all = new ArrayList<>();
      for (String c : sourceDf.columns()) {
        all.add(new SourceQuery.OutputColumn(c, "`" + c.replace("`", "``") + "`"));
      }
      query = SourceQuery.of(query.sourceTableId(), query.sourceNamespace(), all, query.filter(),
          query.limit());
    }
    StructType queryView = QueryLayout.viewSchema(sourceDf, query, viewName);
    StructType selected = new StructType(Arrays.copyOfRange(queryView.fields(), 2,
        queryView.fields().length));
    FunctionSpec function = kind == MaterializedViewKind.QUERY ? null
        : FunctionOptions.build(kind, r.functionClass(), r.partitionBy(),
            r.partitionByIndexedColumn(), options, selected, viewName);
    ViewDefinition def = new ViewDefinition(cat.serverId(r.viewId()), kind, query, function,
        autoRefresh);
    ViewKind viewKind = KindDispatch.of(kind);
    viewKind.validate(viewName, def, source.location(), source.storageOptions());
    Schema arrow = viewKind.viewSchema(def, sourceDf, queryView);
    StructType viewSchema = kind == MaterializedViewKind.QUERY ? queryView
        : LanceArrowUtils.fromArrowSchema(plain(arrow));
    return new Prepared(def, viewSchema, arrow, outputLimit, r.tableProperties());
  }

  private boolean viewExists(List<String> viewId) {
    try {
      cat.locate(viewId, "view");
      return true;
    } catch (MaterializedViewNotFoundException e) {
      return false;
    }
  }

  private void requireStableRowIds(TableLocation source, String viewName) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(a, source.location(),
            CredentialRefresh.readOptions(source.storageOptions()).build())) {
      if (Boolean.FALSE.equals(StableRowIds.of(ds))) {
        throw new InvalidViewDefinitionException(StableRowIds.missingMessage("view "
            + viewName, null).replace("<source>", cat.display(source.relativeId())));
      }
    }
  }

  private RefreshResult createOnServer(CreateViewRequest r, Prepared p, long started) {
    ViewDefinition d = p.definition();
    byte[] ipc = ArrowIpc.toStream(p.arrowSchema(), List.of());
    CreateMaterializedViewRequest req = CreateMaterializedViewRequest.builder(d.viewId())
        .kind(d.kind().wire())
        .sourceQuery(d.sourceQuery().toJson())
        .outputSchema(Base64.getEncoder().encodeToString(ipc))
        .udtfSpec(d.function() == null ? null : d.function().toWire())
        .withNoData(!r.withData())
        .autoRefresh(d.autoRefresh())
        .build();
    CreateMaterializedViewResponse resp;
    try {
      resp = cat.client().createMaterializedView(req);
    } catch (AlreadyExistsException e) {
      if (r.ifNotExists()) {
        return null;
      }
      throw new MaterializedViewAlreadyExistsException("Cannot create materialized view "
          + cat.display(r.viewId()) + ": the server says it already exists", e);
    }
    LOG.info("Server created view {} (version {}, job {})", cat.display(r.viewId()),
        resp.version(), resp.jobId());
    if (!r.withData()) {
      return null;
    }
    return new RefreshResult(resp.jobId(), RefreshResult.JobStatus.SUBMITTED, d.kind(), null,
        0, 0, 0, System.currentTimeMillis() - started);
  }

  private RefreshResult createOnClient(CreateViewRequest r, Prepared p) {
    ViewDefinition d = p.definition();
    String viewName = cat.display(r.viewId());
    Identifier ident = CatalogBinding.ident(r.viewId());
    Map<String, String> props = new LinkedHashMap<>(p.tableProperties());
    props.put("enable_stable_row_ids", "true");
    try {
      cat.catalog().createTable(ident, p.viewSchema(), new Transform[0], props);
    } catch (TableAlreadyExistsException e) {
      throw new MaterializedViewAlreadyExistsException("Cannot create materialized view "
          + viewName + ": it was created concurrently", e);
    } catch (NoSuchNamespaceException e) {
      throw new MaterializedViewNotFoundException("Cannot create materialized view " + viewName
          + ": its namespace does not exist. Create it first (CREATE NAMESPACE)", e);
    }
    try {
      TableLocation view = cat.locate(r.viewId(), "view");
      GenevaLayout.Metadata md = GenevaLayout.encode(d, ViewState.NEVER_REFRESHED,
          cat.client().config().uri().toString());
      long version;
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset ds = org.lance.Dataset.open(a, view.location(),
              CredentialRefresh.readOptions(view.storageOptions()).build())) {
        version = ds.version();
      }
      Map<String, String> schemaMd = new LinkedHashMap<>(md.schema());
      String managedBy = spark.conf().get(MANAGED_BY_CONF, null);
      if (managedBy != null && !managedBy.isBlank()) {
        schemaMd.put(GenevaLayout.MANAGED_BY, managedBy);
      }
      ViewCommit.Builder b = ViewCommit.builder(view.location(), version)
          .storageOptions(view.storageOptions())
          .schemaMetadata(schemaMd)
          .config(describeTableProperties(d));
      md.fields().forEach(b::fieldMetadata);
      b.build().commit();
    } catch (RuntimeException e) {
      try {
        cat.catalog().purgeTable(ident);
      } catch (RuntimeException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    } finally {
      cat.invalidate(r.viewId());
    }
    LOG.info("Created client-managed {} view {}", d.kind().wire(), viewName);
    if (!r.withData()) {
      return null;
    }
    RefreshOptions initial = p.outputLimit() == null ? RefreshOptions.DEFAULTS
        : RefreshOptions.builder().outputLimit(p.outputLimit()).build();
    try {
      // prepare() has just checked the function's options against this very source.
      return refreshOnClient(r.viewId(), initial, read(r.viewId()), false,
          RefreshListener.NONE, null);
    } catch (Throwable failure) {
      throw notCreated(r.viewId(), viewName, failure);
    }
  }

  /**
   * CREATE ... WITH DATA is all or nothing: when the first refresh throws, the view it created
   * is dropped again, so that the corrected CREATE does not find it "already exists". A refresh
   * that skipped rows under error_handling returned PARTIAL and never gets here. The spec's
   * {@code with_no_data} only concerns a server's CreateMaterializedView, whose refresh is an
   * asynchronous job; here the refresh runs inside the statement.
   */
  private RuntimeException notCreated(List<String> viewId, String viewName, Throwable failure) {
    // A cancelled refresh leaves this thread interrupted; the drop must still reach the server.
    boolean interrupted = Thread.interrupted();
    boolean dropped = false;
    try {
      Stored stored = read(viewId);
      if (stored != null) {
        // not every server removes a table's whole directory on purge
        if (stored.definition().kind() == MaterializedViewKind.UDTF) {
          dropUdtfCheckpoints(stored.view(), viewName);
        }
        dropErrorTables(stored.view(), viewName);
        cat.catalog().purgeTable(CatalogBinding.ident(viewId));
      }
      dropped = true;
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    } finally {
      cat.invalidate(viewId);
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    LOG.warn("The first refresh of new view {} failed; {}", viewName, dropped
        ? "the view was dropped again" : "dropping the view failed too");
    if (failure instanceof Error err) {
      throw err;
    }
    // The sentence goes first: a Spark job failure's message ends with an executor stack trace.
    return new MaterializedViewException("Materialized view " + viewName + " was not created: "
        + "its first refresh failed, and CREATE MATERIALIZED VIEW ... WITH DATA then removes the "
        + "view" + (dropped
            ? ". Fix the cause and run the CREATE again, or create the view WITH NO DATA and "
                + "refresh it later"
            : ", but removing it failed too (see the suppressed error): drop it with DROP "
                + "MATERIALIZED VIEW " + viewName + " before creating it again")
        + ". The refresh failed with: " + failure.getMessage(), failure);
  }

  private static Map<String, String> describeTableProperties(ViewDefinition d) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(PROP_KIND, d.kind().wire());
    m.put(PROP_SOURCE, String.join(".", d.sourceQuery().sourceTableId()));
    m.put(PROP_DEFINITION, d.sourceQuery().toJson());
    if (d.function() != null) {
      m.put(PROP_FUNCTION, d.function().envelope().className());
    }
    return m;
  }

  // ---------------------------------------------------------------- refresh

  @Override
  public RefreshResult refresh(List<String> viewId, RefreshOptions options,
      RefreshListener listener) {
    if (mode == MvMode.CLIENT) {
      return refreshOnClient(viewId, options, read(viewId), true, listener, null);
    }
    Stored stored = mode == MvMode.AUTO ? read(viewId) : null;
    if (stored != null && stored.clientManaged()) {
      // The definition just read is the one refreshed: no second lookup of the view.
      return refreshOnClient(viewId, options, stored, true, listener, null);
    }
    try {
      return refreshOnServer(viewId, options, stored);
    } catch (UnsupportedOperationByServerException e) {
      if (mode == MvMode.SERVER) {
        throw new MaterializedViewException("The server at " + cat.client().config().uri()
            + " does not implement RefreshMaterializedView, and catalog '" + cat.name()
            + "' has mv.mode = server", e);
      }
      return refreshOnClient(viewId, options, stored != null ? stored : read(viewId), true,
          listener, null);
    }
  }

  private RefreshResult refreshOnServer(List<String> viewId, RefreshOptions options,
      Stored stored) {
    long started = System.currentTimeMillis();
    MaterializedViewKind kind = stored == null ? null : stored.definition().kind();
    if (kind != null) {
      options.checkApplicableTo(kind);
    }
    RefreshMaterializedViewResponse resp;
    try {
      resp = cat.client().refreshMaterializedView(options.toWire(cat.serverId(viewId)));
    } catch (NotFoundException e) {
      throw new MaterializedViewNotFoundException("Materialized view " + cat.display(viewId)
          + " does not exist on the server", e);
    }
    LOG.info("Server accepted refresh of view {}: job {}", cat.display(viewId), resp.jobId());
    if (options.await()) {
      return awaitServerJob(viewId, resp.jobId(), kind, started);
    }
    return new RefreshResult(resp.jobId(), RefreshResult.JobStatus.SUBMITTED, kind,
        null, 0, 0, 0, System.currentTimeMillis() - started);
  }

  /**
   * Polls the server's job ({@code job/describe}, an extension of this project's view service)
   * to its end: the row a client-managed refresh returns, or the failure it throws.
   */
  private RefreshResult awaitServerJob(List<String> viewId, String jobId,
      MaterializedViewKind kind, long started) {
    String viewName = cat.display(viewId);
    long timeout = JobService.millis(spark, WAIT_TIMEOUT_CONF, "24h");
    long deadline = System.currentTimeMillis() + timeout;
    long pause = 100;
    while (true) {
      MaterializedViewJob j = null;
      try {
        j = cat.client().describeMaterializedViewJob(
            new DescribeMaterializedViewJobRequest(cat.serverId(viewId), jobId));
      } catch (UnsupportedOperationByServerException e) {
        throw new MaterializedViewException("REFRESH ... WAIT of " + viewName + ": the server "
            + "at " + cat.client().config().uri() + " has no job/describe route, so job "
            + jobId + " (accepted, and running there) cannot be followed; do not refresh "
            + "again, check the view later", e);
      } catch (io.lancerest.client.error.CommunicationException
          | io.lancerest.client.error.ServiceUnavailableException e) {
        LOG.info("REFRESH ... WAIT of {}: job {} not readable now ({}); asking again",
            viewName, jobId, e.getMessage());
      }
      RefreshResult.JobStatus st = j == null ? RefreshResult.JobStatus.RUNNING : status(j);
      if (st.ended()) {
        MaterializedViewKind k = j.kind() == null ? kind : MaterializedViewKind.fromWire(j.kind());
        if (st == RefreshResult.JobStatus.FAILED) {
          throw new MaterializedViewException("Refresh of view " + viewName + " (job " + jobId
              + ") failed on the server: " + j.message());
        }
        if (st == RefreshResult.JobStatus.CANCELLED) {
          throw new io.lancerest.spark.mv.RefreshCancelledException("Refresh of view "
              + viewName + " (job " + jobId + ") was cancelled on the server: " + j.message(), null);
        }
        return new RefreshResult(jobId, st, k, j.sourceVersion(), orZero(j.rowsInserted()),
            orZero(j.rowsDeleted()), orZero(j.skipped()), System.currentTimeMillis() - started);
      }
      if (System.currentTimeMillis() > deadline) {
        throw new MaterializedViewException("REFRESH ... WAIT of " + viewName + ": job " + jobId
            + " is still " + st + " on the server after " + timeout + " ms ("
            + WAIT_TIMEOUT_CONF + "); it goes on there, follow it with DESCRIBE JOB '" + jobId
            + "'");
      }
      try {
        Thread.sleep(pause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new MaterializedViewException("REFRESH ... WAIT of " + viewName + " interrupted;"
            + " job " + jobId + " goes on on the server", e);
      }
      pause = Math.min(2000, pause * 2);
    }
  }

  private static RefreshResult.JobStatus status(MaterializedViewJob j) {
    try {
      return RefreshResult.JobStatus.valueOf(String.valueOf(j.status()));
    } catch (IllegalArgumentException e) {
      throw new MaterializedViewException("The server answered job " + j.jobId() + " with "
          + "status '" + j.status() + "', which this client does not know");
    }
  }

  private static long orZero(Long v) {
    return v == null ? 0 : v;
  }

  @Override
  public RefreshPlan explainRefresh(List<String> viewId, RefreshOptions options) {
    String viewName = cat.display(viewId);
    // A server-managed view refreshes however the server decides, and the spec has no route to
    // ask it: only views this client refreshes itself can be explained.
    String serverOnly = "EXPLAIN REFRESH explains views this client refreshes itself (mv.mode "
        + "client or auto); ";
    if (mode == MvMode.SERVER) {
      throw new MaterializedViewException(serverOnly + "catalog '" + cat.name() + "' has "
          + "mv.mode = server, so " + viewName + " is refreshed by the server");
    }
    Stored stored = read(viewId);
    if (stored == null) {
      throw new MaterializedViewNotFoundException("Materialized view " + viewName
          + " does not exist");
    }
    if (!stored.clientManaged()) {
      throw new MaterializedViewException(serverOnly + viewName + " is managed by the server");
    }
    ViewDefinition def = stored.definition();
    List<String> sourceRelative = cat.relativeId(def.sourceQuery().sourceTableId());
    TableLocation source = cat.locate(sourceRelative, "source table of view " + viewName);
    checkFunctionOptions(def, source, viewName);
    try {
      return KindDispatch.explain(spark, viewName, stored.view(), source, def, options);
    } finally {
      cat.invalidate(viewId);
    }
  }

  /**
   * @param stored the view as {@link #read} found it, {@code null} if it does not exist
   * @param checkOptions run the function's option check first (CREATE has just run it)
   * @param opened the job an ASYNC refresh opened (RUNNING recorded), else {@code null}
   */
  private RefreshResult refreshOnClient(List<String> viewId, RefreshOptions options,
      Stored stored, boolean checkOptions, RefreshListener listener, JobTracker opened) {
    String viewName = cat.display(viewId);
    if (stored == null) {
      throw new MaterializedViewNotFoundException("Materialized view " + viewName
          + " does not exist");
    }
    ViewDefinition def = stored.definition();
    JobTracker job = opened != null ? opened : jobs.open(options.jobId() != null
        ? options.jobId() : UUID.randomUUID().toString(), viewId);
    try {
      job.started(def.kind(), null);
      List<String> sourceRelative = cat.relativeId(def.sourceQuery().sourceTableId());
      TableLocation source = cat.locate(sourceRelative, "source table of view " + viewName);
      if (checkOptions) {
        checkFunctionOptions(def, source, viewName);
      }
      LOG.info("Refreshing {} view {} (job {}) from {}", def.kind().wire(), viewName,
          job.jobId(), cat.display(sourceRelative));
      return KindDispatch.refresh(spark, viewName, stored.view(), source, def, options, job,
          listener, cat.caches());
    } catch (RuntimeException | Error e) {
      job.failed(e); // a failure before the refresh sequence; a no-op once it recorded the end
      throw e;
    } finally {
      jobs.closed(job);
      cat.invalidate(viewId);
    }
  }

  // ---------------------------------------------------------------- jobs

  /**
   * Starts the refresh on the catalog's ASYNC threads, in this session, and returns at once:
   * the job id, status RUNNING (already in the job log). A server-managed view is refreshed by
   * its server as by {@link #refresh} (SUBMITTED).
   */
  @Override
  public RefreshResult refreshAsync(List<String> viewId, RefreshOptions options) {
    long started = System.currentTimeMillis();
    Stored stored = mode == MvMode.SERVER ? null : read(viewId);
    if (stored == null && mode != MvMode.SERVER) {
      throw new MaterializedViewNotFoundException("Materialized view " + cat.display(viewId)
          + " does not exist");
    }
    if (stored == null || !stored.clientManaged()) {
      return refresh(viewId, options, RefreshListener.NONE);
    }
    options.checkApplicableTo(stored.definition().kind());
    JobTracker job = jobs.open(options.jobId() != null ? options.jobId()
        : UUID.randomUUID().toString(), viewId);
    try {
      job.started(stored.definition().kind(), null);
      jobs.submit(job, () -> refreshOnClient(viewId, options, stored, true,
          RefreshListener.NONE, job));
    } catch (RuntimeException | Error e) {
      job.failed(e);
      jobs.closed(job);
      throw e;
    }
    return new RefreshResult(job.jobId(), RefreshResult.JobStatus.RUNNING,
        stored.definition().kind(), null, 0, 0, 0, System.currentTimeMillis() - started);
  }

  @Override
  public List<JobRecord> jobs(List<String> viewId, int limit) {
    return jobs.jobs(viewId, limit);
  }

  @Override
  public JobRecord job(String jobId) {
    return jobs.job(jobId);
  }

  @Override
  public JobRecord cancel(String jobId) {
    return jobs.cancel(jobId);
  }

  /**
   * The stored function's own option check, against the columns its SELECT gives over today's
   * source. A view written by another client was never checked here, and a bad option would
   * otherwise fail every source row or partition in the tasks.
   */
  private void checkFunctionOptions(ViewDefinition def, TableLocation source, String viewName) {
    if (def.function() == null) {
      return;
    }
    StructType selected;
    try {
      Dataset<Row> df = QueryLayout.readSource(spark, source.location(),
          source.storageOptions(), null);
      if (def.sourceQuery().projection().isEmpty()) {
        selected = df.schema();
      } else {
        StructType v = QueryLayout.viewSchema(df, def.sourceQuery(), viewName);
        selected = new StructType(Arrays.copyOfRange(v.fields(), 2, v.fields().length));
      }
    } catch (Exception unfit) {
      // The SELECT no longer fits the source: the refresh itself says so, in its own words.
      LOG.debug("View {}: options not checked, its SELECT does not fit the source: {}",
          viewName, unfit.toString());
      return;
    }
    FunctionOptions.validateStored(def.function(), selected, viewName);
  }

  // ---------------------------------------------------------------- drop, describe, list

  @Override
  public boolean drop(List<String> viewId, boolean ifExists) {
    String viewName = cat.display(viewId);
    Stored stored = read(viewId);
    if (stored == null) {
      if (ifExists) {
        return false;
      }
      throw new MaterializedViewNotFoundException("Materialized view " + viewName
          + " does not exist");
    }
    // The skip records of chunker and UDTF refreshes describe this view only; they go first, so
    // a failure leaves the view in place and DROP can simply be repeated.
    // Checkpoints before the errors tables: a failure then leaves the errors history in place.
    if (stored.definition().kind() == MaterializedViewKind.UDTF) {
      dropUdtfCheckpoints(stored.view(), viewName);
    }
    List<String> errorTables = stored.definition().kind() == MaterializedViewKind.QUERY
        ? List.of() : dropErrorTables(stored.view(), viewName);
    // PURGE: a view's data is derived; leaving it behind unreferenced would only leak storage.
    boolean dropped = cat.catalog().purgeTable(CatalogBinding.ident(viewId));
    LOG.info("Dropped materialized view {} and its data{}", viewName,
        errorTables.isEmpty() ? "" : ", and its errors table " + errorTables);
    return dropped;
  }

  /**
   * Drops the {@code <view>__errors} table(s) next to the view's data, where chunker and UDTF
   * refreshes record skipped work items. They are written by path, not registered in the
   * catalog, so nothing else would ever remove them. Returns the locations dropped.
   */
  private static List<String> dropErrorTables(TableLocation view, String viewName) {
    List<String> dropped = new ArrayList<>();
    for (String uri : errorTableLocations(view.location())) {
      ErrorsTableState state = errorsTableAt(uri, view.storageOptions());
      if (state == ErrorsTableState.ABSENT) {
        continue;
      }
      if (state == ErrorsTableState.FOREIGN) {
        // Something else lives at that path (e.g. a user table that happens to be named
        // <view>__errors on a server that lays tables out by name). Never delete data we did
        // not write: leave it and say so.
        LOG.warn("Materialized view {}: '{}' is not an errors table written by this engine "
            + "(its columns differ), so DROP leaves it alone", viewName, uri);
        continue;
      }
      try {
        org.lance.Dataset.drop(uri, CredentialRefresh.current(view.storageOptions()));
      } catch (RuntimeException e) {
        throw new MaterializedViewException("Cannot drop materialized view " + viewName
            + ": its errors table at '" + uri + "' could not be removed (" + e.getMessage()
            + "). The view was left in place; fix the cause and drop it again", e);
      }
      dropped.add(uri);
    }
    return dropped;
  }

  /**
   * Drops the resume checkpoints a failed UDTF refresh left inside the view's location: not
   * every server removes a table's whole directory on purge.
   */
  private static void dropUdtfCheckpoints(TableLocation view, String viewName) {
    try {
      io.lancerest.spark.mv.udtf.PartitionCheckpoints.drop(view.location(),
          view.storageOptions());
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot drop materialized view " + viewName + ": "
          + e.getMessage() + ". The view was left in place; fix the cause and drop it again", e);
    }
  }

  /** Where chunker and UDTF refreshes put their errors table. */
  static List<String> errorTableLocations(String viewLocation) {
    return List.of(io.lancerest.spark.mv.ErrorsTable.nextTo(viewLocation));
  }

  private enum ErrorsTableState { ABSENT, ERRORS_TABLE, FOREIGN }

  private static ErrorsTableState errorsTableAt(String uri, Map<String, String> storageOptions) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(a, uri,
            CredentialRefresh.readOptions(storageOptions).build())) {
      return io.lancerest.spark.mv.ErrorsTable.hasErrorsTableColumns(ds)
          ? ErrorsTableState.ERRORS_TABLE : ErrorsTableState.FOREIGN;
    } catch (RuntimeException e) {
      // Absent is the normal case (no refresh skipped anything). Anything else (e.g. access
      // denied) counts as present, so that the drop itself reports it.
      String m = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
      return m.contains("not found") || m.contains("does not exist")
          || m.contains("no such file") ? ErrorsTableState.ABSENT : ErrorsTableState.ERRORS_TABLE;
    }
  }


  @Override
  public io.lancerest.spark.mv.MaintenanceResult optimize(List<String> viewId) {
    Stored stored = read(viewId);
    if (stored == null) {
      throw new MaterializedViewNotFoundException("Materialized view " + cat.display(viewId)
          + " does not exist");
    }
    try {
      ViewMaintenance.Outcome o;
      try {
        o = ViewMaintenance.run(stored.view().location(), stored.view().storageOptions(),
            ViewMaintenance.Policy.session(spark), stored.view().properties(), true, null);
      } catch (IllegalArgumentException e) {
        throw new InvalidOptionException("Cannot optimize materialized view "
            + cat.display(viewId) + ": " + e.getMessage());
      } catch (IllegalStateException e) {
        throw new MaterializedViewException("Cannot optimize materialized view "
            + cat.display(viewId) + ": " + e.getMessage(), e);
      }
      LOG.info("OPTIMIZE MATERIALIZED VIEW {}: {} -> {} fragments, {} old versions removed{}",
          cat.display(viewId), o.fragmentsBefore(), o.fragmentsAfter(), o.versionsRemoved(),
          o.compactionSkipped() == null ? "" : "; compaction skipped: " + o.compactionSkipped());
      if (o.compactionSkipped() != null) {
        throw new MaterializedViewException("OPTIMIZE MATERIALIZED VIEW " + cat.display(viewId)
            + " did not compact: " + o.compactionSkipped() + ". Run it again.");
      }
      return new io.lancerest.spark.mv.MaintenanceResult(o.fragmentsBefore(), o.fragmentsAfter(),
          o.versionsRemoved(), o.bytesRemoved());
    } finally {
      cat.invalidate(viewId);
    }
  }

  @Override
  public ViewDescription describe(List<String> viewId) {
    Stored stored = read(viewId);
    if (stored == null) {
      throw new MaterializedViewNotFoundException("Materialized view " + cat.display(viewId)
          + " does not exist");
    }
    return new ViewDescription(viewId, stored.definition(), stored.state(),
        stored.clientManaged() ? MvMode.CLIENT.wire() : MvMode.SERVER.wire());
  }

  @Override
  public List<List<String>> list(List<String> namespace) {
    Identifier[] tables;
    try {
      tables = cat.catalog().listTables(namespace.toArray(String[]::new));
    } catch (NoSuchNamespaceException e) {
      throw new MaterializedViewNotFoundException("Namespace " + cat.display(namespace)
          + " does not exist", e);
    }
    List<List<String>> out = new ArrayList<>();
    for (Identifier t : tables) {
      List<String> id = new ArrayList<>(Arrays.asList(t.namespace()));
      id.add(t.name());
      try {
        TableLocation loc = cat.locate(id, "table");
        if (GenevaLayout.isMaterializedView(schemaMetadata(loc))) {
          out.add(List.copyOf(id));
        }
      } catch (MaterializedViewNotFoundException | NotFoundException gone) {
        // dropped while listing
      } catch (RuntimeException unreadable) {
        LOG.debug("Table {} is not readable as a Lance dataset: {}", id, unreadable.toString());
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- stored definitions

  /** A view's table and its decoded definition. */
  record Stored(TableLocation view, ViewDefinition definition, ViewState state,
      boolean clientManaged) {}

  /** The view's stored definition; {@code null} when no such table exists. */
  Stored read(List<String> viewId) {
    TableLocation view;
    try {
      view = cat.locate(viewId, "view");
    } catch (MaterializedViewNotFoundException e) {
      return null;
    }
    GenevaLayout.Metadata md = metadata(view);
    if (!GenevaLayout.isMaterializedView(md.schema())) {
      throw new InvalidViewDefinitionException("Table " + cat.display(viewId) + " is not a "
          + "materialized view (its schema has no '" + GenevaLayout.VERSION + "' metadata); "
          + "use the TABLE statements for it");
    }
    GenevaLayout.StoredView sv = GenevaLayout.decode(viewId, md);
    return new Stored(view, sv.definition(), sv.state(),
        md.schema().containsKey(GenevaLayout.FORMAT)
            && !md.schema().containsKey(GenevaLayout.MANAGED_BY));
  }

  private static Map<String, String> schemaMetadata(TableLocation loc) {
    return metadata(loc).schema();
  }

  private static GenevaLayout.Metadata metadata(TableLocation loc) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(a, loc.location(),
            CredentialRefresh.readOptions(loc.storageOptions()).build())) {
      Schema s = ds.getSchema();
      Map<String, Map<String, String>> fields = new LinkedHashMap<>();
      for (Field f : s.getFields()) {
        if (f.getMetadata() != null && !f.getMetadata().isEmpty()) {
          fields.put(f.getName(), f.getMetadata());
        }
      }
      return new GenevaLayout.Metadata(
          s.getCustomMetadata() == null ? Map.of() : s.getCustomMetadata(), fields);
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

  static StructField field(String name, org.apache.spark.sql.types.DataType t, boolean nullable) {
    return DataTypes.createStructField(name, t, nullable);
  }
}
