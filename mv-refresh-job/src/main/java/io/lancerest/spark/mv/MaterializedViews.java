package io.lancerest.spark.mv;

import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.MaintenanceResult;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.ViewDescription;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/**
 * The materialized-view API of one catalog: what SQL statements, the RefreshJob CLI and Java
 * users call. There is one implementation of each operation behind it (one refresh engine).
 */
public interface MaterializedViews {
  /** Creates a view; with {@code withData}, also runs its first refresh. */
  RefreshResult create(CreateViewRequest request);

  /**
   * The body of the spec's CreateMaterializedView that a CREATE of {@code request} sends to a
   * server managing views: {@code source_query} and {@code output_schema} derived from the
   * request as CREATE derives them (the SELECT analyzed against the source's schema). Nothing
   * is created, and the view may already exist.
   */
  default CreateMaterializedViewRequest createRequest(CreateViewRequest request) {
    throw new MaterializedViewException(getClass().getName() + " does not derive "
        + "CreateMaterializedView requests");
  }

  /** Refreshes a view. Throws {@link MaterializedViewNotFoundException} if it does not exist. */
  default RefreshResult refresh(List<String> viewId, RefreshOptions options) {
    return refresh(viewId, options, RefreshListener.NONE);
  }

  /** Refreshes a view, reporting to {@code listener} as it goes. */
  RefreshResult refresh(List<String> viewId, RefreshOptions options, RefreshListener listener);

  /**
   * Throws what a refresh of {@code view}, as {@link #describe} just returned it, would be
   * refused with before it starts (a table of it whose versions the namespace server manages:
   * {@link io.lancerest.spark.mv.error.VersionManagedTableException}); nothing is written. For
   * callers that queue a refresh to run later (the view service), so that the caller hears it
   * at once. Only what the description does not tell is looked up (the source, the job log).
   * By default nothing is refused.
   */
  default void checkRefresh(ViewDescription view) {
  }

  /**
   * Throws what recording a refresh job would be refused with (a job log whose versions the
   * namespace server manages: {@link io.lancerest.spark.mv.error.VersionManagedTableException});
   * creates the log when missing, as the refresh would. For callers that create a view and
   * queue its first refresh themselves (the view service). By default nothing is refused.
   */
  default void checkJobLog() {
  }

  /**
   * Starts a refresh and returns at once with its job id and status RUNNING; it runs in this
   * SparkSession, on threads of the catalog. Follow it with {@link #job}, stop it with {@link
   * #cancel}.
   */
  default RefreshResult refreshAsync(List<String> viewId, RefreshOptions options) {
    throw noJobs("ASYNC refreshes");
  }

  /**
   * The refresh jobs in the job log, newest first: of view {@code viewId} (catalog-relative),
   * or of every view when {@code null}; at most {@code limit}.
   */
  default List<JobRecord> jobs(List<String> viewId, int limit) {
    throw noJobs("a job log");
  }

  /** A job's state ({@code DESCRIBE JOB}); throws when the log does not have it. */
  default JobRecord job(String jobId) {
    throw noJobs("a job log");
  }

  /**
   * Stops a RUNNING job of this Spark application: nothing of it is committed and it ends
   * CANCELLED. Returns its state once it ended (or the wait ran out).
   */
  default JobRecord cancel(String jobId) {
    throw noJobs("CANCEL JOB");
  }

  /**
   * The job {@code jobId} of view {@code viewId}: a view service finds its jobs through their
   * view. By default, {@link #job(String)}.
   */
  default JobRecord job(List<String> viewId, String jobId) {
    return job(jobId);
  }

  /** Cancels job {@code jobId} of view {@code viewId}; by default {@link #cancel(String)}. */
  default JobRecord cancel(List<String> viewId, String jobId) {
    return cancel(jobId);
  }

  private MaterializedViewException noJobs(String what) {
    return new MaterializedViewException(getClass().getName() + " does not support " + what);
  }

  /**
   * Compacts the view table and removes its old versions now, by the session's maintenance
   * policy ({@code spark.lancerest.mv.maintenance.*}; compaction whatever the thresholds).
   */
  default MaintenanceResult optimize(List<String> viewId) {
    throw new MaterializedViewException(getClass().getName() + " does not support OPTIMIZE "
        + "MATERIALIZED VIEW");
  }

  /**
   * What {@link #refresh} would do now with {@code options}, with nothing written or committed
   * ({@code EXPLAIN REFRESH MATERIALIZED VIEW}).
   */
  RefreshPlan explainRefresh(List<String> viewId, RefreshOptions options);

  /** Drops a view and its data; false when absent and {@code ifExists}. */
  boolean drop(List<String> viewId, boolean ifExists);

  ViewDescription describe(List<String> viewId);

  /** Identifiers (relative to the catalog) of the views directly in {@code namespace}. */
  List<List<String>> list(List<String> namespace);

  /** Builds the API for a Spark catalog; chosen by {@value #FACTORY_CONF}. */
  interface Factory {
    MaterializedViews forCatalog(SparkSession spark, String catalogName);
  }

  /**
   * The engine's factory, by name: this API does not depend on the engine that implements it
   * (the engine depends on the API).
   */
  String DEFAULT_FACTORY = "io.lancerest.spark.mv.engine.DefaultMaterializedViewsFactory";

  /** Spark conf naming the {@link Factory} class (a public no-argument constructor). */
  String FACTORY_CONF = "spark.lancerest.mv.factory";

  /** The API for catalog {@code catalogName} of {@code spark}. */
  static MaterializedViews forCatalog(SparkSession spark, String catalogName) {
    String cls = spark.conf().get(FACTORY_CONF, DEFAULT_FACTORY);
    if (cls.equals("io.lancerest.spark.mv.DefaultMaterializedViewsFactory")) {
      cls = DEFAULT_FACTORY; // its name before it moved to the engine's package
    }
    Factory f;
    try {
      f = (Factory) Class.forName(cls, true, Thread.currentThread().getContextClassLoader())
          .getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new MaterializedViewException(FACTORY_CONF + " = '" + cls + "' is not a loadable "
          + MaterializedViews.class.getName() + ".Factory with a public no-argument "
          + "constructor: " + e, e);
    }
    return f.forCatalog(spark, catalogName);
  }
}
