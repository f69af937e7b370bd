package io.lancerest.spark.mv.driver;

/**
 * The driver path cannot give the same rows as the Spark path for sure, or would hold too much:
 * nothing was written, and the caller runs the Spark path. The message says why, for the log.
 */
public final class Declined extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public Declined(String why) {
    super(why, null, false, false);
  }
}
