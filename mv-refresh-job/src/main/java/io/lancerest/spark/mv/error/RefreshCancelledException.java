package io.lancerest.spark.mv.error;

/** A refresh stopped by {@code CANCEL JOB} before its view commit: nothing was committed. */
public class RefreshCancelledException extends MaterializedViewException {
  private static final long serialVersionUID = 1L;

  public RefreshCancelledException(String message, Throwable cause) {
    super(message, cause);
  }
}
