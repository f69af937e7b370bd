package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.query.QueryLayout;
import io.lancerest.spark.mv.query.StoredSelects;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client-managed views refreshed (or explained) in this Spark session by {@link KindDispatch},
 * each refresh under a job of the catalog's job log.
 */
final class ClientRefresh {
  // The engine's log category, which operators and the suite's log checks filter on.
  private static final Logger LOG = LoggerFactory.getLogger(EngineViews.class);
  private final SparkSession spark;
  private final CatalogBinding cat;
  private final EngineJobs jobs;

  ClientRefresh(SparkSession spark, CatalogBinding cat, EngineJobs jobs) {
    this.spark = spark;
    this.cat = cat;
    this.jobs = jobs;
  }

  /**
   * Refreshes the view now, in the caller's thread.
   *
   * @param view the view as the statement resolved it
   * @param checkStored check the stored definition first, as CREATE checks it ({@link
   *     #checkStored}; CREATE has just run those checks)
   * @param opened the job an ASYNC refresh opened (RUNNING recorded), else {@code null}
   * @param source where the source lives when the statement has described it already (CREATE
   *     ... WITH DATA), else {@code null}: described here
   */
  RefreshResult refresh(ResolvedView view, RefreshOptions options, boolean checkStored,
      RefreshListener listener, JobTracker opened, TableLocation source) {
    String viewName = view.name();
    ViewDefinition def = view.definition();
    JobTracker job = opened != null ? opened : jobs.open(options.jobId() != null
        ? options.jobId() : UUID.randomUUID().toString(), view.relativeId());
    try {
      job.started(def.kind(), null);
      List<String> sourceRelative = cat.relativeId(def.sourceQuery().sourceTableId());
      if (source == null) {
        source = cat.locate(sourceRelative, "source table of view " + viewName);
      }
      if (checkStored) {
        checkStored(def, source, viewName);
      }
      LOG.info("Refreshing {} view {} (job {}) from {}", def.kind().wire(), viewName,
          job.jobId(), cat.display(sourceRelative));
      return KindDispatch.refresh(spark, viewName, view.table(), source, def, options, job,
          listener, cat.caches());
    } catch (RuntimeException | Error e) {
      job.failed(e); // a failure before the refresh sequence; a no-op once it recorded the end
      throw e;
    } finally {
      jobs.closed(job);
      cat.invalidate(view.relativeId());
    }
  }

  /**
   * Starts the refresh of client-managed {@code stored} on the catalog's ASYNC threads and
   * returns at once: the job id, status RUNNING (already in the job log).
   */
  RefreshResult submit(ResolvedView view, RefreshOptions options, long started) {
    JobTracker job = jobs.open(options.jobId() != null ? options.jobId()
        : UUID.randomUUID().toString(), view.relativeId());
    try {
      job.started(view.definition().kind(), null);
      jobs.submit(job, () -> refresh(view, options, true, RefreshListener.NONE, job, null));
    } catch (RuntimeException | Error e) {
      job.failed(e);
      jobs.closed(job);
      throw e;
    }
    return new RefreshResult(job.jobId(), RefreshResult.JobStatus.RUNNING,
        view.definition().kind(), null, 0, 0, 0, System.currentTimeMillis() - started);
  }

  /** What refreshing client-managed {@code stored} now would do, with nothing changed. */
  RefreshPlan explain(ResolvedView view, RefreshOptions options) {
    String viewName = view.name();
    ViewDefinition def = view.definition();
    List<String> sourceRelative = cat.relativeId(def.sourceQuery().sourceTableId());
    TableLocation source = cat.locate(sourceRelative, "source table of view " + viewName);
    checkStored(def, source, viewName);
    try {
      return KindDispatch.explain(spark, viewName, view.table(), source, def, options);
    } finally {
      cat.invalidate(view.relativeId());
    }
  }

  /**
   * What CREATE checks of a definition that a stored one may not have passed: it was stored by
   * an earlier version or another client, or its function's checks depend on today's source.
   * Refuses a SELECT that uses a function of the clock or the session ({@link StoredSelects}),
   * then a function option the function refuses.
   */
  private void checkStored(ViewDefinition def, TableLocation source, String viewName) {
    cat.caches().get(StoredSelects.class, StoredSelects::new).check(spark, source.dataset(),
        def.sourceQuery(), viewName);
    checkFunctionOptions(def, source, viewName);
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
}
