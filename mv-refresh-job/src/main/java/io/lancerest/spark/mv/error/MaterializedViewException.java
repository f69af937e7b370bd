package io.lancerest.spark.mv.error;

/** Base of every error the materialized-view engine raises on purpose. */
public class MaterializedViewException extends RuntimeException {
  public MaterializedViewException(String message) {
    super(message);
  }

  public MaterializedViewException(String message, Throwable cause) {
    super(message, cause);
  }
}
