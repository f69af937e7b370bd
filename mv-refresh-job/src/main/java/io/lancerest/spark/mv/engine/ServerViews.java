package io.lancerest.spark.mv.engine;

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
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.error.MaterializedViewAlreadyExistsException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.Base64;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Server-managed views: created and refreshed through the spec's CreateMaterializedView /
 * RefreshMaterializedView, a refresh with WAIT followed to its end through the server's job.
 */
final class ServerViews {
  // The engine's log category, which operators already filter on.
  private static final Logger LOG = LoggerFactory.getLogger(EngineViews.class);
  private final SparkSession spark;
  private final CatalogBinding cat;
  private final ServiceJobs jobs;

  ServerViews(SparkSession spark, CatalogBinding cat, ServiceJobs jobs) {
    this.spark = spark;
    this.cat = cat;
    this.jobs = jobs;
  }

  /**
   * Creates the view on the server; {@code null} when it exists under IF NOT EXISTS, or when
   * the CREATE said WITH NO DATA.
   *
   * @throws UnsupportedOperationByServerException the server has no materialized-view routes
   */
  RefreshResult create(CreateViewRequest r, PreparedView p, long started) {
    ViewDefinition d = p.definition();
    CreateMaterializedViewRequest req = request(r, p);
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
        resp.getVersion(), resp.getJobId());
    jobs.answered(resp.getJobId(), r.viewId());
    if (!r.withData()) {
      return null;
    }
    return new RefreshResult(resp.getJobId(), RefreshResult.JobStatus.SUBMITTED, d.kind(), null,
        0, 0, 0, System.currentTimeMillis() - started);
  }

  /**
   * The CreateMaterializedView body for a prepared CREATE: {@code output_schema} is the view
   * table's whole schema (for a query view its layout columns {@code __source_row_id} and
   * {@code __is_set} first, then the SELECT's), as base64 of an Arrow IPC stream with no batch.
   */
  static CreateMaterializedViewRequest request(CreateViewRequest r, PreparedView p) {
    ViewDefinition d = p.definition();
    byte[] ipc = ArrowIpc.toStream(p.arrowSchema(), List.of());
    return new CreateMaterializedViewRequest().id(d.viewId())
        .kind(CreateMaterializedViewRequest.KindEnum.fromValue(d.kind().wire()))
        .sourceQuery(d.sourceQuery().toJson())
        .outputSchema(Base64.getEncoder().encodeToString(ipc))
        .udtfSpec(d.function() == null ? null : d.function().toWire())
        .withNoData(!r.withData())
        .autoRefresh(d.autoRefresh());
  }

  /**
   * Asks the server to refresh the view ({@code stored}: the view as read here, {@code null}
   * when not read), and follows the job to its end when the options say WAIT.
   */
  RefreshResult refresh(List<String> viewId, RefreshOptions options,
      ResolvedView stored) {
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
    LOG.info("Server accepted refresh of view {}: job {}", cat.display(viewId), resp.getJobId());
    jobs.answered(resp.getJobId(), viewId);
    if (options.await()) {
      return awaitServerJob(viewId, resp.getJobId(), kind, started);
    }
    return new RefreshResult(resp.getJobId(), RefreshResult.JobStatus.SUBMITTED, kind,
        null, 0, 0, 0, System.currentTimeMillis() - started);
  }

  /**
   * Polls the server's job ({@code job/describe}, an extension of this project's view service)
   * to its end: the row a client-managed refresh returns, or the failure it throws.
   */
  private RefreshResult awaitServerJob(List<String> viewId, String jobId,
      MaterializedViewKind kind, long started) {
    String viewName = cat.display(viewId);
    long timeout = JobService.millis(spark, EngineViews.WAIT_TIMEOUT_CONF, "24h");
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
          throw new io.lancerest.spark.mv.error.RefreshCancelledException("Refresh of view "
              + viewName + " (job " + jobId + ") was cancelled on the server: " + j.message(), null);
        }
        return new RefreshResult(jobId, st, k, j.sourceVersion(), orZero(j.rowsInserted()),
            orZero(j.rowsDeleted()), orZero(j.skipped()), System.currentTimeMillis() - started);
      }
      if (System.currentTimeMillis() > deadline) {
        throw new MaterializedViewException("REFRESH ... WAIT of " + viewName + ": job " + jobId
            + " is still " + st + " on the server after " + timeout + " ms ("
            + EngineViews.WAIT_TIMEOUT_CONF + "); it goes on there, follow it with DESCRIBE JOB '"
            + jobId + "'");
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
}
