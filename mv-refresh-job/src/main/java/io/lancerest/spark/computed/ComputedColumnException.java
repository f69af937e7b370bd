package io.lancerest.spark.computed;

import io.lancerest.spark.mv.error.MaterializedViewException;

/**
 * A computed column refused or failed: the message names the table, the column and what to do.
 */
public class ComputedColumnException extends MaterializedViewException {
  public ComputedColumnException(String message) {
    super(message);
  }

  public ComputedColumnException(String message, Throwable cause) {
    super(message, cause);
  }
}
