package io.lancerest.spark.mv.commit;

/** A view commit failed before or while committing; the view keeps its previous version. */
public class ViewCommitException extends RuntimeException {
  public ViewCommitException(String message) {
    super(message);
  }

  public ViewCommitException(String message, Throwable cause) {
    super(message, cause);
  }
}
