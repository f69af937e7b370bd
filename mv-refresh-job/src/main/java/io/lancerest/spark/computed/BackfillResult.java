package io.lancerest.spark.computed;

/**
 * What a backfill did.
 *
 * @param fragmentsComputed fragments whose column this backfill wrote
 * @param fragmentsAlreadyDone fragments a previous backfill had already computed
 * @param rowsComputed rows whose value the function computed (NULL inputs count: their value is
 *     NULL without a call)
 * @param rowsSkipped rows left NULL because their batch failed under {@code error_handling =
 *     skip}
 * @param rowsLeftForLater rows left for the next backfill: those committed by others during the
 *     backfill (in fragments newer than {@code readVersion}), and those of fragments that changed
 *     while they were computed (their values were not committed)
 * @param readVersion the table version whose fragments were computed
 * @param committedVersion the table's version after the last commit of this backfill (the read
 *     version when nothing was committed)
 */
public record BackfillResult(long fragmentsComputed, long fragmentsAlreadyDone, long rowsComputed,
    long rowsSkipped, long rowsLeftForLater, long readVersion, long committedVersion) {}
