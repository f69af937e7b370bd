package io.lancerest.spark.mv.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult;

/**
 * A job, and a view's auto refresh, as the service's routes answer them: the job log's record,
 * field names in snake case as in the spec's models; times are epoch milliseconds.
 */
final class JobJson {
  private JobJson() {}

  static ObjectNode of(JobRecord r) {
    ObjectNode n = LanceJson.mapper().createObjectNode();
    n.put("job_id", r.jobId());
    ArrayNode id = n.putArray("view_id");
    r.viewId().forEach(id::add);
    n.put("kind", r.kind());
    n.put("status", r.status().name());
    if (r.sourceVersion() != null) {
      n.put("source_version", r.sourceVersion());
    }
    n.put("started_at", r.startedAt());
    if (r.finishedAt() != null) {
      n.put("finished_at", r.finishedAt());
    }
    n.put("heartbeat_at", r.heartbeatAt());
    ObjectNode p = n.putObject("progress");
    p.put("items_done", r.itemsDone());
    p.put("items_total", r.itemsTotal());
    p.put("rows_written", r.rowsWritten());
    p.put("text", r.progress());
    n.put("rows_inserted", r.rowsInserted());
    n.put("rows_deleted", r.rowsDeleted());
    n.put("skipped", r.skipped());
    if (r.message() != null) {
      n.put("message", r.message());
    }
    n.put("application_id", r.applicationId());
    n.put("launched_by", r.launchedBy());
    return n;
  }

  /**
   * A view's auto refresh: {@code state} is {@code off} (the service does not refresh it by
   * itself), {@code watching}, or {@code backing_off} after failed refreshes, with how many in a
   * row (those that lengthen the wait, and those for a passing cause that do not), the last
   * one's time and message, and the earliest time auto refresh tries again.
   *
   * @param st the view's auto refresh; {@code null} when the service runs none
   */
  static ObjectNode autoRefresh(AutoRefresh.Status st) {
    ObjectNode n = LanceJson.mapper().createObjectNode();
    boolean watched = st != null && st.watched();
    n.put("watched", watched);
    if (!watched) {
      n.put("state", "off");
      return n;
    }
    RefreshBackoff.State f = st.failing().orElse(null);
    n.put("state", f == null ? "watching" : "backing_off");
    n.put("consecutive_failures", f == null ? 0 : f.failures());
    n.put("passing_failures", f == null ? 0 : f.passingFailures());
    if (f != null) {
      n.put("last_failure_at", f.lastFailureAt());
      n.put("last_error", f.lastError());
      n.put("next_attempt_at", f.nextAttemptAt());
    }
    return n;
  }

  /** A refresh that ended before it ran (FAILED or CANCELLED), with its message. */
  static ObjectNode ended(RefreshQueue.Ended e) {
    ObjectNode n = held(e.jobId(), e.viewId(), e.status(), e.submittedAt(),
        e.launchedBy(), e.message());
    n.put("finished_at", e.endedAt());
    return n;
  }

  /** A refresh accepted but not started: status SUBMITTED, nothing recorded yet. */
  static ObjectNode waiting(RefreshQueue.Entry e) {
    return held(e.jobId(), e.viewId(), RefreshResult.JobStatus.SUBMITTED, e.submittedAt(),
        e.launchedBy(), "waiting for a free refresh slot");
  }

  /** A job only the service's queue knows (the job log has no record of it). */
  private static ObjectNode held(String jobId, java.util.List<String> viewId,
      RefreshResult.JobStatus status, long submittedAt, String launchedBy, String message) {
    ObjectNode n = LanceJson.mapper().createObjectNode();
    n.put("job_id", jobId);
    ArrayNode id = n.putArray("view_id");
    viewId.forEach(id::add);
    n.put("status", status.name());
    n.put("submitted_at", submittedAt);
    n.put("launched_by", launchedBy);
    n.put("message", message);
    return n;
  }
}
