package io.lancerest.spark.mv;

/** A refresh or create option has an unknown name or an invalid value. */
public class InvalidOptionException extends MaterializedViewException {
  public InvalidOptionException(String message) {
    super(message);
  }
}
