package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.result.RefreshResult;
import java.time.Duration;
import java.util.List;

/**
 * What a UDTF refresh did.
 *
 * @param status {@code SKIPPED}: nothing done; {@code DONE}: the view was
 *     rebuilt from every partition; {@code PARTIAL}: rebuilt, but the partitions in
 *     {@code skipped} are missing (their errors are in the errors table)
 * @param sourceVersion the source version the view now reflects
 * @param viewVersion the view table version after the refresh (unchanged when up to date)
 * @param partitions partitions in the input (0 when up to date)
 * @param computed partitions whose UDTF call succeeded in this run
 * @param reused partitions taken from checkpoints of an earlier, failed run
 * @param udtfCalls UDTF calls made, retries included
 * @param rowsInserted rows in the new view version
 * @param rowsDeleted rows of the previous view version (the rebuild replaces them all)
 * @param errorsTable location of the table holding the skipped partitions' errors, or null
 */
record UdtfRefreshResult(String jobId, RefreshResult.JobStatus status, long sourceVersion,
    long viewVersion, long partitions, long computed, long reused, List<SkippedPartition> skipped,
    long udtfCalls, long rowsInserted, long rowsDeleted, String errorsTable, Duration duration) {

  /**
   * A partition left out of the view after every attempt failed; {@code partitionKey} is the key
   * as text, {@code null} for the NULL partition.
   */
  public record SkippedPartition(String partitionKey, int attempts, String errorClass,
      String errorMessage) {}

  public UdtfRefreshResult {
    skipped = List.copyOf(skipped);
  }
}
