package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.error.RefreshCancelledException;
import io.lancerest.spark.mv.fragments.DeletionVectors;
import java.util.UUID;
import org.apache.spark.sql.SparkSession;

/**
 * One refresh as every kind sees it: the session it runs in, the view's name as users write it,
 * its job id, the listener it reports to, and the Spark job group its jobs run in.
 */
public final class RefreshContext {
  private final SparkSession spark;
  private final String viewName;
  private final String jobId;
  private final RefreshListener listener;
  private final RefreshCaches caches;
  private final JobTracker job;
  private final long startedMillis = System.currentTimeMillis();

  /**
   * @param jobId the caller's job id; {@code null} draws one
   * @param listener {@code null} listens to nothing
   */
  public RefreshContext(SparkSession spark, String viewName, String jobId,
      RefreshListener listener) {
    this(spark, viewName, jobId, listener, null);
  }

  /** @param caches the catalog's ({@code null}: this refresh's own) */
  public RefreshContext(SparkSession spark, String viewName, String jobId,
      RefreshListener listener, RefreshCaches caches) {
    this(spark, viewName, listener, caches, JobTracker.none(
        jobId == null || jobId.isBlank() ? UUID.randomUUID().toString() : jobId));
  }

  /**
   * A refresh whose job is recorded by {@code job} (its id is the refresh's job id).
   *
   * @param caches the catalog's ({@code null}: this refresh's own)
   */
  public RefreshContext(SparkSession spark, String viewName, RefreshListener listener,
      RefreshCaches caches, JobTracker job) {
    this.caches = caches == null ? new RefreshCaches() : caches;
    this.spark = spark;
    this.viewName = viewName;
    this.job = job;
    this.jobId = job.jobId();
    this.listener = listener == null ? RefreshListener.NONE : listener;
  }

  public SparkSession spark() {
    return spark;
  }

  /** {@code catalog.ns.view} (or the view's location when it has no catalog name). */
  public String viewName() {
    return viewName;
  }

  public String jobId() {
    return jobId;
  }

  public RefreshListener listener() {
    return listener;
  }

  public RefreshCaches caches() {
    return caches;
  }

  /**
   * How this refresh reads deletion files: directly where they are local, each kept for the
   * catalog's next refresh ({@link DeletionVectors.Cache}).
   */
  public DeletionVectors.Reader deletionVectors() {
    return caches.get(DeletionVectors.Cache.class, DeletionVectors.Cache::new)
        .over(DeletionVectors.DIRECT);
  }

  /** The refresh's job, as the job log records it. */
  public JobTracker job() {
    return job;
  }

  /**
   * Throws when the job was cancelled ({@code CANCEL JOB}): cancelling the job group stops the
   * Spark jobs running now, and this stops the refresh between them.
   */
  public void checkCancelled() {
    if (job.cancelRequested()) {
      throw cancelled(null);
    }
  }

  RefreshCancelledException cancelled(Throwable cause) {
    return new RefreshCancelledException("Refresh of view " + viewName + " (job " + jobId
        + ") was cancelled by CANCEL JOB; nothing was committed, the view is as it was", cause);
  }

  public void observe(RefreshListener.Probe probe, Object value) {
    listener.observe(probe, value);
  }

  public long elapsedMillis() {
    return System.currentTimeMillis() - startedMillis;
  }

  /** {@code REFRESH MATERIALIZED VIEW <view> (job <id>)}: how the Spark UI names its jobs. */
  public String description() {
    return "REFRESH MATERIALIZED VIEW " + viewName + " (job " + jobId + ")";
  }

  /**
   * The Spark job tag of the refresh's jobs ({@code SparkContext.cancelJobsWithTag} stops
   * them); a tag holds no comma.
   */
  public String jobTag() {
    return jobTag(jobId);
  }

  /** {@link #jobTag()} of the refresh with job id {@code jobId}. */
  public static String jobTag(String jobId) {
    return "lancerest-refresh-" + jobId.replace(',', '_');
  }

  /**
   * Marks the Spark jobs this thread starts as the refresh's: tagged with {@link #jobTag}, and
   * in the caller's job group when it has one (cancelling the caller's statement, as the Thrift
   * server and notebooks do, then stops the refresh too), else in a group named by the job id.
   * {@link RefreshDriver} puts the caller's properties back when the refresh ends.
   */
  void begin() {
    org.apache.spark.SparkContext sc = spark.sparkContext();
    if (sc.getLocalProperty("spark.jobGroup.id") == null) {
      // Not interrupting task threads on cancel: lance-core writes through native threads that
      // an interrupt does not stop, and a cancelled task must still release their buffers.
      sc.setJobGroup(jobId, description(), false);
    }
    // Also in the caller's group: lance-core writes through native threads that an interrupt
    // does not stop, and a cancelled task must still release their buffers.
    sc.setLocalProperty("spark.job.interruptOnCancel", "false");
    sc.addJobTag(jobTag());
    describe(null);
  }

  /** Names the phase the next Spark jobs belong to, in their description. */
  public void describe(String phase) {
    checkCancelled();
    String progress = job.itemsStarted() ? " [" + job.progress() + "]" : "";
    spark.sparkContext().setJobDescription((phase == null ? description()
        : description() + ": " + phase) + progress);
  }
}
