package io.lancerest.spark.mv.udtf;

/**
 * A row returned by a {@link BatchUdtf} does not match the declared output schema. This is a bug
 * in the function or its declaration, not a transient failure: it is never retried or skipped,
 * and the refresh fails without committing.
 */
public class UdtfOutputMismatchException extends RuntimeException {
  public UdtfOutputMismatchException(String message) {
    super(message);
  }
}
