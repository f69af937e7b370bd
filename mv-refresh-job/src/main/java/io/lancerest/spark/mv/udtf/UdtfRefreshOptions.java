package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.RefreshListener;

/**
 * Knobs of one refresh (the UDTF-relevant fields of RefreshMaterializedViewRequest).
 *
 * @param force rebuild even when the source version equals the view's base version
 * @param concurrency Spark tasks the partitions are spread over (at most); {@code <= 0} uses
 *     Spark's default parallelism
 * @param maxRowsPerFragment rows per view fragment; {@code <= 0} leaves lance-core's default
 * @param jobId recorded on the view and in error records; generated when null
 * @param listener observes the refresh ({@link RefreshListener#NONE} when not given)
 * @param errorsTable location of the errors table; null puts it next to the view as {@code
 *     <view>__errors.lance}
 */
public record UdtfRefreshOptions(boolean force, int concurrency, int maxRowsPerFragment,
    String jobId, String errorsTable, RefreshListener listener) {
  public static final UdtfRefreshOptions DEFAULT = new UdtfRefreshOptions(false, 0, 0, null, null);

  public UdtfRefreshOptions {
    listener = listener == null ? RefreshListener.NONE : listener;
  }

  public UdtfRefreshOptions(boolean force, int concurrency, int maxRowsPerFragment, String jobId,
      String errorsTable) {
    this(force, concurrency, maxRowsPerFragment, jobId, errorsTable, null);
  }

  /** Reports the refresh to {@code l} ({@link RefreshListener}). */
  public UdtfRefreshOptions withListener(RefreshListener l) {
    return new UdtfRefreshOptions(force, concurrency, maxRowsPerFragment, jobId, errorsTable, l);
  }

  public UdtfRefreshOptions withForce(boolean f) {
    return new UdtfRefreshOptions(f, concurrency, maxRowsPerFragment, jobId, errorsTable, listener);
  }

  public UdtfRefreshOptions withConcurrency(int c) {
    return new UdtfRefreshOptions(force, c, maxRowsPerFragment, jobId, errorsTable, listener);
  }

  public UdtfRefreshOptions withJobId(String id) {
    return new UdtfRefreshOptions(force, concurrency, maxRowsPerFragment, id, errorsTable, listener);
  }

  public UdtfRefreshOptions withErrorsTable(String location) {
    return new UdtfRefreshOptions(force, concurrency, maxRowsPerFragment, jobId, location, listener);
  }
}
