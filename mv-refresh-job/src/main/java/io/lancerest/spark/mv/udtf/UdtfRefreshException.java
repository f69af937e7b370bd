package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.error.MaterializedViewException;

/**
 * A UDTF refresh failed; nothing was committed and the view keeps its previous version.
 * Partitions that finished before the failure are checkpointed and reused by the next refresh
 * of the same UDTF name, version and source version.
 */
public class UdtfRefreshException extends MaterializedViewException {
  public UdtfRefreshException(String message) {
    super(message);
  }

  public UdtfRefreshException(String message, Throwable cause) {
    super(message, cause);
  }
}
