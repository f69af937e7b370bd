package io.lancerest.spark.mv.engine;

import io.lancerest.client.error.ForbiddenException;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.maintenance.ViewMaintenance;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.ViewDescription;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine behind {@link MaterializedViews} for one {@code LanceRestCatalog}: server-managed
 * views through the spec's CreateMaterializedView / RefreshMaterializedView, client-managed views
 * as catalog tables carrying their definition in the Geneva layout, refreshed in this Spark
 * session by {@link KindDispatch}. Mode: catalog option {@code mv.mode} ({@link MvMode}).
 *
 * <p>This class dispatches each statement by mode; the work is done by {@link PreparedView}
 * (checks at CREATE), {@link ServerViews}, {@link ClientCreate} and {@link ClientRefresh},
 * {@link ViewDrop} and {@link StoredViews} (definitions, SHOW).
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
  private final StoredViews views;
  private final ServerViews server;
  private final ServiceJobs serviceJobs;
  private final ClientRefresh client;
  private final ClientCreate clientCreate;
  private final ViewDrop drops;

  public EngineViews(SparkSession spark, CatalogBinding cat) {
    this.spark = spark;
    this.cat = cat;
    this.mode = MvMode.parse(cat.options().mvMode(), cat.name());
    this.views = new StoredViews(cat);
    this.jobs = new EngineJobs(spark, cat, id -> {
      ResolvedView s = views.read(id);
      return s == null ? null : s.state().lastJob();
    });
    this.serviceJobs = new ServiceJobs(cat);
    this.server = new ServerViews(spark, cat, serviceJobs);
    this.client = new ClientRefresh(spark, cat, jobs);
    this.clientCreate = new ClientCreate(spark, cat, views, client);
    this.drops = new ViewDrop(cat, views);
  }

  public MvMode mode() {
    return mode;
  }

  @Override
  public RefreshResult create(CreateViewRequest r) {
    long started = System.currentTimeMillis();
    String viewName = cat.display(r.viewId());
    PreparedView p = PreparedView.prepare(spark, cat, r, viewName);
    if (p == null) {
      return null; // IF NOT EXISTS and it exists
    }
    if (mode != MvMode.CLIENT) {
      try {
        return server.create(r, p, started);
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
    return clientCreate.create(r, p);
  }

  @Override
  public CreateMaterializedViewRequest createRequest(CreateViewRequest r) {
    return ServerViews.request(r, PreparedView.prepare(spark, cat, r, cat.display(r.viewId()),
        false));
  }

  @Override
  public RefreshResult refresh(List<String> viewId, RefreshOptions options,
      RefreshListener listener) {
    if (mode == MvMode.CLIENT) {
      return client.refresh(views.require(viewId), options, true, listener, null, null);
    }
    ResolvedView stored = mode == MvMode.AUTO ? views.read(viewId) : null;
    if (stored != null && stored.clientManaged()) {
      // The definition just read is the one refreshed: no second lookup of the view.
      return client.refresh(stored, options, true, listener, null, null);
    }
    try {
      return server.refresh(viewId, options, stored);
    } catch (UnsupportedOperationByServerException e) {
      if (mode == MvMode.SERVER) {
        throw new MaterializedViewException("The server at " + cat.client().config().uri()
            + " does not implement RefreshMaterializedView, and catalog '" + cat.name()
            + "' has mv.mode = server", e);
      }
      return client.refresh(stored != null ? stored : views.require(viewId), options, true,
          listener, null, null);
    }
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
    ResolvedView stored = views.require(viewId);
    if (!stored.clientManaged()) {
      throw new MaterializedViewException(serverOnly + viewName + " is managed by the server");
    }
    return client.explain(stored, options);
  }

  /** The tables of a view this client refreshes, as its refresh checks them first. */
  @Override
  public void checkRefresh(ViewDescription view) {
    if (mode == MvMode.CLIENT
        || mode == MvMode.AUTO && MvMode.CLIENT.wire().equals(view.mode())) {
      client.refuseManagedVersions(view, "REFRESH MATERIALIZED VIEW " + cat.display(
          view.viewId()) + " is refused", "Nothing was refreshed.");
    }
  }

  @Override
  public void checkJobLog() {
    if (mode != MvMode.SERVER) {
      client.requireWritableLog("Recording refresh jobs is refused", null);
    }
  }

  /**
   * Starts the refresh on the catalog's ASYNC threads, in this session, and returns at once:
   * the job id, status RUNNING (already in the job log). A server-managed view is refreshed by
   * its server as by {@link #refresh} (SUBMITTED).
   */
  @Override
  public RefreshResult refreshAsync(List<String> viewId, RefreshOptions options) {
    long started = System.currentTimeMillis();
    ResolvedView stored = mode == MvMode.SERVER ? null : views.read(viewId);
    if (stored == null && mode != MvMode.SERVER) {
      throw views.notFound(viewId);
    }
    if (stored == null || !stored.clientManaged()) {
      return refresh(viewId, options, RefreshListener.NONE);
    }
    options.checkApplicableTo(stored.definition().kind());
    return client.submit(stored, options, started);
  }

  /**
   * Jobs of a view its server refreshes are read through the server's job routes, as the caller
   * (who may have no rights on the job log); when the server has no such routes, from the log.
   */
  @Override
  public List<JobRecord> jobs(List<String> viewId, int limit) {
    if (viewId == null && mode == MvMode.SERVER) {
      throw new MaterializedViewException("SHOW JOBS through the server of catalog '"
          + cat.name() + "' (mv.mode = server) lists the jobs of one view: SHOW JOBS FOR <view>");
    }
    if (viewId != null && refreshedByServer(viewId)) {
      try {
        return serviceJobs.list(viewId, limit);
      } catch (UnsupportedOperationByServerException noRoutes) {
        LOG.debug("No job routes at {}: reading the job log", cat.client().config().uri());
      }
    }
    return jobs.jobs(viewId, limit);
  }

  @Override
  public JobRecord job(String jobId) {
    List<String> view = serviceJobs.viewOf(jobId);
    if (view != null) {
      return job(view, jobId);
    }
    if (mode == MvMode.SERVER) {
      throw unknownServerJob(jobId, "DESCRIBE JOB");
    }
    try {
      return jobs.job(jobId);
    } catch (ForbiddenException e) {
      throw notReadable(jobId, "DESCRIBE JOB", e);
    }
  }

  @Override
  public JobRecord job(List<String> viewId, String jobId) {
    if (refreshedByServer(viewId)) {
      try {
        return serviceJobs.describe(viewId, jobId);
      } catch (UnsupportedOperationByServerException noRoutes) {
        LOG.debug("No job routes at {}: reading the job log", cat.client().config().uri());
      }
    }
    return ofView(jobs.job(jobId), viewId);
  }

  @Override
  public JobRecord cancel(String jobId) {
    List<String> view = serviceJobs.viewOf(jobId);
    if (view != null) {
      return cancel(view, jobId);
    }
    if (mode == MvMode.SERVER) {
      throw unknownServerJob(jobId, "CANCEL JOB");
    }
    try {
      return jobs.cancel(jobId);
    } catch (ForbiddenException e) {
      throw notReadable(jobId, "CANCEL JOB", e);
    }
  }

  @Override
  public JobRecord cancel(List<String> viewId, String jobId) {
    if (refreshedByServer(viewId)) {
      return serviceJobs.cancel(viewId, jobId);
    }
    ofView(jobs.job(jobId), viewId);
    return jobs.cancel(jobId);
  }

  /** Whether the server refreshes the view (mv.mode server, or a view it manages in auto). */
  private boolean refreshedByServer(List<String> viewId) {
    if (mode == MvMode.SERVER) {
      return true;
    }
    if (mode == MvMode.CLIENT) {
      return false;
    }
    ResolvedView v = views.read(viewId);
    return v != null && !v.clientManaged();
  }

  private JobRecord ofView(JobRecord r, List<String> viewId) {
    if (!r.viewId().equals(cat.serverId(viewId))) {
      throw new MaterializedViewException("Job '" + r.jobId() + "' is a job of view "
          + r.view() + ", not of " + cat.display(viewId));
    }
    return r;
  }

  /** The job log refused to this caller: a view service's jobs are found through their view. */
  private MaterializedViewException notReadable(String jobId, String statement,
      ForbiddenException e) {
    return new MaterializedViewException("Job '" + jobId + "' was not started from this "
        + "catalog, and its job log may not be read with this catalog's credentials ("
        + e.getMessage() + "). A view service finds its jobs through their view: " + statement
        + " '" + jobId + "' FOR <view>", e);
  }

  private MaterializedViewException unknownServerJob(String jobId, String statement) {
    return new MaterializedViewException("Job '" + jobId + "' was not started from this "
        + "catalog, and catalog '" + cat.name() + "' (mv.mode = server) finds jobs through "
        + "their view: " + statement + " '" + jobId + "' FOR <view> (SHOW JOBS FOR <view> lists "
        + "a view's jobs)");
  }

  @Override
  public boolean drop(List<String> viewId, boolean ifExists) {
    return drops.drop(viewId, ifExists);
  }


  @Override
  public io.lancerest.spark.mv.result.MaintenanceResult optimize(List<String> viewId) {
    ResolvedView stored = views.require(viewId);
    ManagedVersions.VIEW.refuse(stored.table(), cat, "OPTIMIZE MATERIALIZED VIEW "
        + stored.name() + " is refused", "Nothing was compacted or removed.");
    try {
      ViewMaintenance.Outcome o;
      try {
        o = ViewMaintenance.run(stored.table().dataset(), ViewMaintenance.Policy.session(spark),
            stored.table().properties(), true, null);
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
      return new io.lancerest.spark.mv.result.MaintenanceResult(o.fragmentsBefore(), o.fragmentsAfter(),
          o.versionsRemoved(), o.bytesRemoved());
    } finally {
      cat.invalidate(viewId);
    }
  }

  @Override
  public ViewDescription describe(List<String> viewId) {
    StoredViews.Described d = views.describe(viewId);
    ResolvedView stored = d.view();
    return new ViewDescription(viewId, stored.definition(), stored.state(),
        stored.clientManaged() ? MvMode.CLIENT.wire() : MvMode.SERVER.wire(),
        stored.table().managedVersioning(), d.indexes());
  }

  @Override
  public List<List<String>> list(List<String> namespace) {
    return views.list(namespace);
  }
}
