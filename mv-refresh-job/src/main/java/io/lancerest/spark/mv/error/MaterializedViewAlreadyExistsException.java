package io.lancerest.spark.mv.error;

/** CREATE MATERIALIZED VIEW named a view or table that already exists (without IF NOT EXISTS). */
public class MaterializedViewAlreadyExistsException extends MaterializedViewException {
  public MaterializedViewAlreadyExistsException(String message) {
    super(message);
  }

  public MaterializedViewAlreadyExistsException(String message, Throwable cause) {
    super(message, cause);
  }
}
