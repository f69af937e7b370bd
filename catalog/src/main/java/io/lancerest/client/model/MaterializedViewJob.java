package io.lancerest.client.model;

import java.util.List;

/**
 * A refresh job as the view service answers it (an extension of this project): the job log's
 * record. Times are epoch milliseconds; status is SUBMITTED, RUNNING, DONE, PARTIAL, SKIPPED,
 * FAILED or CANCELLED.
 */
public record MaterializedViewJob(String jobId, List<String> viewId, String kind, String status,
    Long sourceVersion, Long submittedAt, Long startedAt, Long finishedAt, Long heartbeatAt,
    Progress progress, Long rowsInserted, Long rowsDeleted, Long skipped, String message,
    String applicationId, String launchedBy) {
  /** Spark tasks done and submitted so far, and rows written. */
  public record Progress(Long itemsDone, Long itemsTotal, Long rowsWritten, String text) {}
}
