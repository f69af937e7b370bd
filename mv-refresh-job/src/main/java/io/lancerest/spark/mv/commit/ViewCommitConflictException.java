package io.lancerest.spark.mv.commit;

/**
 * The change cannot be applied to the view as it is now: another writer committed after the
 * version this change was read at, or a file the change reuses is gone. Nothing of this change
 * was applied; computing the refresh again from the view as it is now resolves it.
 */
public class ViewCommitConflictException extends ViewCommitException {
  public ViewCommitConflictException(String message, Throwable cause) {
    super(message, cause);
  }
}
