package io.lancerest.spark.mv.error;

/**
 * A statement would read or commit a Lance table whose versions its namespace server manages
 * ({@code managed_versioning=true}) past the server, which the engine refuses: the message names
 * the table, why, and what to do instead. Nothing was written when it is thrown.
 */
public class VersionManagedTableException extends MaterializedViewException {
  public VersionManagedTableException(String message) {
    super(message);
  }
}
