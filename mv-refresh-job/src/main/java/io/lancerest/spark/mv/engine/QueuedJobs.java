package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job log's record of refreshes a view service accepted before it could start them:
 * SUBMITTED while they wait, CANCELLED or FAILED when they end without running, so that SHOW
 * JOBS and job/describe know them after the service restarts.
 */
public final class QueuedJobs {
  private static final Logger LOG = LoggerFactory.getLogger(QueuedJobs.class);
  /** Who launches the service's refreshes ({@code launched_by}). */
  private static final List<String> SERVICE_LAUNCHERS = List.of("service", "auto");

  private final CatalogBinding cat;
  private final JobService log;

  private QueuedJobs(CatalogBinding cat, JobService log) {
    this.cat = cat;
    this.log = log;
  }

  /** The log of catalog {@code catalogName}; records nothing when that catalog keeps none. */
  public static QueuedJobs of(SparkSession spark, String catalogName) {
    CatalogBinding cat = CatalogBinding.of(spark, catalogName);
    return new QueuedJobs(cat, JobService.of(spark, cat));
  }

  /** A refresh of {@code viewId} (catalog-relative) waits for a free slot. */
  public void submitted(String jobId, List<String> viewId, String launchedBy,
      long submittedAt) {
    append(List.of(state(jobId, viewId, launchedBy, submittedAt, JobStatus.SUBMITTED, null,
        "waiting for a free refresh slot", submittedAt * 1000)));
  }

  /** A refresh that waited ended without running ({@code CANCELLED} or {@code FAILED}). */
  public void endedWaiting(String jobId, List<String> viewId, String launchedBy,
      long submittedAt, JobStatus status, String message) {
    long now = System.currentTimeMillis();
    // after its SUBMITTED state (submittedAt * 1000) even within the same millisecond
    append(List.of(state(jobId, viewId, launchedBy, submittedAt, status, now, message,
        Math.max(now, submittedAt) * 1000 + 1)));
  }

  /**
   * Ends the SUBMITTED jobs an earlier run of the service left (it stopped before they
   * started): FAILED with {@code message}, for the caller to ask again. Returns how many.
   */
  public int failLeftOver(String message) {
    if (log == null) {
      return 0;
    }
    long now = System.currentTimeMillis();
    List<JobRecord> ended = new ArrayList<>();
    for (JobRecord r : log.table().latest()) {
      if (r.status() == JobStatus.SUBMITTED && SERVICE_LAUNCHERS.contains(r.launchedBy())
          && !log.applicationId().equals(r.applicationId())) {
        ended.add(new JobRecord(r.jobId(), r.viewId(), r.kind(), JobStatus.FAILED,
            r.sourceVersion(), r.startedAt(), now, r.heartbeatAt(), 0, 0, 0, 0, 0, 0, message,
            r.applicationId(), r.launchedBy(), Math.max(r.seq() + 1, now * 1000)));
      }
    }
    if (!ended.isEmpty()) {
      log.table().append(ended);
      LOG.info("{} refresh(es) left waiting by an earlier run of the service recorded FAILED",
          ended.size());
    }
    return ended.size();
  }

  private JobRecord state(String jobId, List<String> viewId, String launchedBy,
      long submittedAt, JobStatus status, Long finishedAt, String message, long seq) {
    return new JobRecord(jobId, cat.serverId(viewId), null, status, null, submittedAt,
        finishedAt, submittedAt, 0, 0, 0, 0, 0, 0, message,
        log == null ? null : log.applicationId(), launchedBy, seq);
  }

  /** The queue goes on when the log cannot be written: the refresh itself still runs. */
  private void append(List<JobRecord> records) {
    if (log == null) {
      return;
    }
    try {
      log.table().append(records);
    } catch (RuntimeException e) {
      LOG.warn("Job {} not recorded {} in the job log: {}", records.get(0).jobId(),
          records.get(0).status(), e.getMessage());
    }
  }
}
