package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.result.RefreshResult;
import java.io.Serializable;
import java.util.List;

/**
 * The outcome of one chunker refresh.
 *
 * @param status {@code DONE}, {@code PARTIAL} (some parents were skipped by {@code
 *     error_handling}; see {@link #skipped}) or {@code SKIPPED} (nothing to do, no commit)
 * @param sourceVersion the source version the view now reflects (the new watermark)
 * @param previousWatermark the source version it reflected before ({@code 0}: never refreshed)
 * @param viewVersion the view table's version after the refresh
 * @param parentsExpanded parents run through the chunker (new, changed, or re-run)
 * @param parentsWithoutChildren of those, parents that yielded no rows
 * @param parentsRemoved parents whose children were deleted (source row deleted or filtered
 *     out)
 * @param rowsInserted view rows written
 * @param rowsDeleted view rows deleted
 * @param fragmentsWritten new view fragments
 * @param skipped parents skipped after their error, with the error
 * @param durationMs wall time of the refresh
 */
record ChunkerRefreshResult(RefreshResult.JobStatus status, long sourceVersion, long previousWatermark,
    long viewVersion, long parentsExpanded, long parentsWithoutChildren, long parentsRemoved,
    long rowsInserted, long rowsDeleted, int fragmentsWritten, List<SkippedParent> skipped,
    long durationMs) {
  public ChunkerRefreshResult {
    skipped = List.copyOf(skipped);
  }

  /**
   * A parent left out of the view because the chunker kept failing on it. It is not marked
   * processed: the next refresh tries it again.
   */
  public record SkippedParent(long sourceRowId, int attempts, String errorClass,
      String errorMessage) implements Serializable {}
}
