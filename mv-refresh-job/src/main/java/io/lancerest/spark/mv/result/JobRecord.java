package io.lancerest.spark.mv.result;

import io.lancerest.client.Identifiers;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.util.List;

/**
 * One state of a refresh job, as the job log keeps it (one row per state change; the newest row
 * of a job is its state) and as {@code SHOW JOBS} / {@code DESCRIBE JOB} show it. Times are epoch
 * milliseconds.
 *
 * @param viewId the view's identifier on the server (the catalog's parent included)
 * @param kind {@code query}, {@code chunker} or {@code udtf}; {@code null} before it is known
 * @param sourceVersion the source version refreshed to, once resolved
 * @param finishedAt when it ended; {@code null} while RUNNING
 * @param heartbeatAt the last time its driver recorded it (a RUNNING job whose heartbeat is
 *     older than the configured timeout is shown FAILED, driver lost)
 * @param itemsDone Spark tasks of the refresh finished so far
 * @param itemsTotal Spark tasks of the refresh submitted so far
 * @param rowsWritten rows the finished tasks read and wrote, as Spark's task metrics count them
 * @param message why it failed or was cancelled, or a note; never a secret
 * @param applicationId the Spark application that ran it
 * @param seq the order of this state among the job's states
 */
public record JobRecord(String jobId, List<String> viewId, String kind, JobStatus status,
    Long sourceVersion, long startedAt, Long finishedAt, long heartbeatAt, long itemsDone,
    long itemsTotal, long rowsWritten, long rowsInserted, long rowsDeleted, long skipped,
    String message, String applicationId, String launchedBy, long seq) {

  /** This state with another status and message (what a reader derives, e.g. driver lost). */
  public JobRecord shownAs(JobStatus s, Long finished, String msg) {
    return new JobRecord(jobId, viewId, kind, s, sourceVersion, startedAt, finished, heartbeatAt,
        itemsDone, itemsTotal, rowsWritten, rowsInserted, rowsDeleted, skipped, msg,
        applicationId, launchedBy, seq);
  }

  public JobRecord {
    viewId = viewId == null ? List.of() : List.copyOf(viewId);
  }

  /** The view as the server names it: {@code ns.v}. */
  public String view() {
    return Identifiers.display(viewId);
  }

  /** {@code 12/40 tasks, 1500 rows/s} (rate over the job's run time so far). */
  public String progress() {
    long end = finishedAt != null ? finishedAt : heartbeatAt;
    long ms = Math.max(1, end - startedAt);
    return itemsDone + "/" + itemsTotal + " tasks, " + (rowsWritten * 1000 / ms) + " rows/s";
  }
}
