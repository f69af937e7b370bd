package io.lancerest.spark.mv.engine;

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
    this.server = new ServerViews(spark, cat);
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

  @Override
  public boolean drop(List<String> viewId, boolean ifExists) {
    return drops.drop(viewId, ifExists);
  }


  @Override
  public io.lancerest.spark.mv.result.MaintenanceResult optimize(List<String> viewId) {
    ResolvedView stored = views.require(viewId);
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
    ResolvedView stored = views.require(viewId);
    return new ViewDescription(viewId, stored.definition(), stored.state(),
        stored.clientManaged() ? MvMode.CLIENT.wire() : MvMode.SERVER.wire());
  }

  @Override
  public List<List<String>> list(List<String> namespace) {
    return views.list(namespace);
  }
}
