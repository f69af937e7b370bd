package io.lancerest.spark.mv.commit;

/**
 * lance-core or the object store failed the commit itself, and the view's versions show it did
 * not land: the view is unchanged and running the refresh again is safe.
 */
public class ViewCommitNotAppliedException extends ViewCommitException {
  public ViewCommitNotAppliedException(String message, Throwable cause) {
    super(message, cause);
  }
}
