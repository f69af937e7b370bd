package io.lancerest.spark.mv.commit;

/**
 * Another writer committed to the view after the version this change was read at. Nothing of
 * this change was applied; re-running the refresh recomputes it against the new version.
 */
public class ViewCommitConflictException extends ViewCommitException {
  public ViewCommitConflictException(String message, Throwable cause) {
    super(message, cause);
  }
}
