package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.error.VersionManagedTableException;
import io.lancerest.spark.mv.query.QueryLayout;
import io.lancerest.spark.mv.query.StoredSelects;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.ViewDescription;
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
   *     ... WITH DATA, REFRESH ... ASYNC), else {@code null}: described here
   */
  RefreshResult refresh(ResolvedView view, RefreshOptions options, boolean checkStored,
      RefreshListener listener, JobTracker opened, TableLocation source) {
    String viewName = view.name();
    ViewDefinition def = view.definition();
    JobTracker job = opened != null ? opened : jobs.open(options.jobId() != null
        ? options.jobId() : UUID.randomUUID().toString(), view.relativeId());
    try {
      List<String> sourceRelative = cat.relativeId(def.sourceQuery().sourceTableId());
      MaterializedViewNotFoundException sourceMissing = null;
      if (source == null) {
        try {
          source = cat.locate(sourceRelative, "source table of view " + viewName);
        } catch (MaterializedViewNotFoundException e) {
          sourceMissing = e; // the job's failure, recorded after its RUNNING below
        }
      }
      // Before the job's first record: a refused refresh records no job (nothing it would
      // write may be written). Any other failure is a job that started and failed.
      refuseManagedVersions(view, source, "REFRESH MATERIALIZED VIEW " + viewName
          + " is refused", true, "Nothing was refreshed.");
      job.started(def.kind(), null);
      if (sourceMissing != null) {
        throw sourceMissing;
      }
      if (checkStored) {
        checkStored(def, source, viewName);
      }
      LOG.info("Refreshing {} view {} (job {}) from {}", def.kind().wire(), viewName,
          job.jobId(), cat.display(sourceRelative));
      return KindDispatch.refresh(spark, viewName, view.table(), source, def, options, job,
          listener, cat.caches());
    } catch (VersionManagedTableException refused) {
      if (opened != null) {
        job.failed(refused); // an ASYNC job, RUNNING since it was submitted
      }
      throw refused;
    } catch (RuntimeException | Error e) {
      job.failed(e); // a failure before the refresh sequence; a no-op once it recorded the end
      throw e;
    } finally {
      jobs.closed(job);
      cat.invalidate(view.relativeId());
    }
  }

  /**
   * Refuses a refresh of {@code view} whose view table, source or job log has its versions
   * managed by the namespace server ({@link ManagedVersions}).
   *
   * @param source the source as described for the statement; {@code null} when it was not
   *     found (the refresh itself then says so)
   * @param createLog whether the job log is created when missing (a refresh), or only an
   *     existing one is checked (EXPLAIN)
   */
  void refuseManagedVersions(ResolvedView view, TableLocation source, String lead,
      boolean createLog, String outcome) {
    ManagedVersions.VIEW.refuse(view.table(), cat, lead, outcome);
    ManagedVersions.SOURCE.refuse(source, cat, lead, outcome);
    jobs.requireWritableLog(lead, createLog, outcome);
  }

  /** Refuses a job log whose versions its server manages; creates it when missing. */
  void requireWritableLog(String lead, String outcome) {
    jobs.requireWritableLog(lead, true, outcome);
  }

  /** {@link #refuseManagedVersions} before a refresh of {@code view} is queued. */
  TableLocation checkedSource(ResolvedView view, String lead, boolean createLog,
      String outcome) {
    TableLocation source = sourceIfPresent(view.definition(), view.name());
    refuseManagedVersions(view, source, lead, createLog, outcome);
    return source;
  }

  /**
   * {@link #refuseManagedVersions} for a view {@code d} describes: its table as described (not
   * again), its source located now, the job log created if missing, as the refresh would.
   */
  void refuseManagedVersions(ViewDescription d, String lead, String outcome) {
    ManagedVersions.VIEW.refuse(d.versionsManaged(), d.viewId(), cat, lead, outcome);
    ManagedVersions.SOURCE.refuse(sourceIfPresent(d.definition(), cat.display(d.viewId())), cat,
        lead, outcome);
    jobs.requireWritableLog(lead, true, outcome);
  }

  /** The source of a view, or {@code null} when missing (its refresh then fails on that). */
  private TableLocation sourceIfPresent(ViewDefinition def, String viewName) {
    try {
      return cat.locate(cat.relativeId(def.sourceQuery().sourceTableId()),
          "source table of view " + viewName);
    } catch (MaterializedViewNotFoundException missing) {
      return null; // the refresh fails on it in its own words, as a job of its own
    }
  }

  /**
   * Starts the refresh of client-managed {@code stored} on the catalog's ASYNC threads and
   * returns at once: the job id, status RUNNING (already in the job log).
   */
  RefreshResult submit(ResolvedView view, RefreshOptions options, long started) {
    // refused here, by the statement itself, rather than as a job that fails later
    TableLocation source = checkedSource(view, "REFRESH MATERIALIZED VIEW " + view.name()
        + " ASYNC is refused", true, "No job was started.");
    JobTracker job = jobs.open(options.jobId() != null ? options.jobId()
        : UUID.randomUUID().toString(), view.relativeId());
    try {
      job.started(view.definition().kind(), null);
      jobs.submit(job, () -> refresh(view, options, true, RefreshListener.NONE, job, source));
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
    refuseManagedVersions(view, source, "EXPLAIN REFRESH: REFRESH MATERIALIZED VIEW " + viewName
        + " would be refused", false, null);
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
