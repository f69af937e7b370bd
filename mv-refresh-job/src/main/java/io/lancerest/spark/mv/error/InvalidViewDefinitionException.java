package io.lancerest.spark.mv.error;

/** A view definition (SQL, Java API, stored metadata or wire fields) is malformed or invalid. */
public class InvalidViewDefinitionException extends MaterializedViewException {
  public InvalidViewDefinitionException(String message) {
    super(message);
  }

  public InvalidViewDefinitionException(String message, Throwable cause) {
    super(message, cause);
  }
}
