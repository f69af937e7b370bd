package io.lancerest.spark.mv.error;

/** The view, or its source table, does not exist (RefreshJob exit code 3). */
public class MaterializedViewNotFoundException extends MaterializedViewException {
  public MaterializedViewNotFoundException(String message) {
    super(message);
  }

  public MaterializedViewNotFoundException(String message, Throwable cause) {
    super(message, cause);
  }
}
