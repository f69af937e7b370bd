package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;

/**
 * A UDTF view's definition cannot run against its source: a missing or unsupported vector
 * index, an unknown input or partition column, a class that is not a {@link BatchUdtf}. Nothing
 * is created or committed; the message says what to change.
 */
public class UdtfValidationException extends InvalidViewDefinitionException {
  public UdtfValidationException(String message) {
    super(message);
  }

  public UdtfValidationException(String message, Throwable cause) {
    super(message, cause);
  }
}
