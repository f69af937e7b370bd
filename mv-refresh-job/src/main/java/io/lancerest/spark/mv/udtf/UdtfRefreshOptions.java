package io.lancerest.spark.mv.udtf;

/**
 * Knobs of one refresh (the UDTF-relevant fields of RefreshMaterializedViewRequest).
 *
 * @param force rebuild even when the source version equals the view's base version
 * @param concurrency Spark tasks the partitions are spread over (at most); {@code <= 0} uses
 *     Spark's default parallelism
 * @param maxRowsPerFragment rows per view fragment; {@code <= 0} leaves lance-core's default
 * @param jobId recorded on the view and in error records; generated when null
 * @param errorsTable location of the errors table; null puts it next to the view as {@code
 *     <view>__errors.lance}
 */
public record UdtfRefreshOptions(boolean force, int concurrency, int maxRowsPerFragment,
    String jobId, String errorsTable) {
  public static final UdtfRefreshOptions DEFAULT = new UdtfRefreshOptions(false, 0, 0, null, null);

  public UdtfRefreshOptions withForce(boolean f) {
    return new UdtfRefreshOptions(f, concurrency, maxRowsPerFragment, jobId, errorsTable);
  }

  public UdtfRefreshOptions withConcurrency(int c) {
    return new UdtfRefreshOptions(force, c, maxRowsPerFragment, jobId, errorsTable);
  }

  public UdtfRefreshOptions withJobId(String id) {
    return new UdtfRefreshOptions(force, concurrency, maxRowsPerFragment, id, errorsTable);
  }

  public UdtfRefreshOptions withErrorsTable(String location) {
    return new UdtfRefreshOptions(force, concurrency, maxRowsPerFragment, jobId, location);
  }
}
