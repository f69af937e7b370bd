package io.lancerest.spark.mv.result;

import io.lancerest.spark.mv.definition.MaterializedViewKind;

/**
 * The outcome of one refresh; the row {@code REFRESH MATERIALIZED VIEW} returns.
 *
 * @param jobId the job id (the server's, in server-managed mode)
 * @param status how it ended (SUBMITTED when the server runs it asynchronously)
 * @param kind the view's kind; {@code null} for a server-managed view whose table is unreadable
 * @param sourceVersion the source version refreshed to, or {@code null} if unknown (SUBMITTED)
 * @param rowsInserted view rows added
 * @param rowsDeleted view rows removed
 * @param skipped work items skipped under error_handling (PARTIAL when > 0)
 * @param durationMs wall time of the refresh
 * @param details the kind's own counts, by name in snake case (chunker: {@code
 *     parents_expanded}, {@code parents_without_children}, {@code parents_removed}, {@code
 *     fragments_written}; UDTF: {@code partitions}, {@code partitions_computed}, {@code
 *     partitions_reused}, {@code udtf_calls}); empty when none
 */
public record RefreshResult(String jobId, JobStatus status, MaterializedViewKind kind,
    Long sourceVersion, long rowsInserted, long rowsDeleted, long skipped, long durationMs,
    java.util.Map<String, Long> details) {

  public RefreshResult {
    details = details == null ? java.util.Map.of()
        : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(details));
  }

  /** A result without kind-specific counts. */
  public RefreshResult(String jobId, JobStatus status, MaterializedViewKind kind,
      Long sourceVersion, long rowsInserted, long rowsDeleted, long skipped, long durationMs) {
    this(jobId, status, kind, sourceVersion, rowsInserted, rowsDeleted, skipped, durationMs,
        null);
  }

  /**
   * Job states; SUBMITTED → RUNNING → DONE | PARTIAL | FAILED | CANCELLED, or SKIPPED (nothing
   * to do).
   */
  public enum JobStatus {
    SUBMITTED, RUNNING, DONE, PARTIAL, SKIPPED, FAILED, CANCELLED;

    /** Whether the job has ended (nothing more will be recorded for it). */
    public boolean ended() {
      return this != SUBMITTED && this != RUNNING;
    }
  }
}
