package io.lancerest.spark.mv.error;

/**
 * What computes a view's rows (a chunker, a UDTF, a query view's SELECT) failed while a refresh
 * ran, and nothing retried or skipped it: the refresh committed nothing. One type and one
 * message for every kind: {@code Refresh of view <view> (job <id>) failed: <function> failed
 * <where>: <first cause>. Nothing was committed; the view is unchanged}, where the first cause
 * is the function's own error, not the Spark job's wrapping of it.
 */
public class FunctionFailedException extends MaterializedViewException {
  private static final long serialVersionUID = 1L;

  private final String viewName;
  private final String function;
  private final String where;
  private final String firstCause;

  /**
   * Raised where the refresh is not known (inside a Spark task); the refresh's driver names the
   * view and the job ({@link #named}).
   *
   * @param function what failed, with its class ({@code chunker 'Splitter'
   *     (com.example.Splitter)})
   * @param where which work item, and after how many attempts ({@code on source row id 7 after
   *     2 attempt(s)}), or {@code in a Spark task}
   * @param firstCause the function's error as {@code class: message}
   */
  public FunctionFailedException(String function, String where, String firstCause,
      Throwable cause) {
    this(null, null, function, where, firstCause, cause);
  }

  public FunctionFailedException(String viewName, String jobId, String function, String where,
      String firstCause, Throwable cause) {
    super((viewName == null ? "" : "Refresh of view " + viewName + " (job " + jobId
        + ") failed: ") + function + " failed " + where + ": " + firstCause
        + ". Nothing was committed; the view is unchanged", cause);
    this.viewName = viewName;
    this.function = function;
    this.where = where;
    this.firstCause = firstCause;
  }

  /** This failure, in the words of the refresh of {@code viewName} (job {@code jobId}). */
  public FunctionFailedException named(String viewName, String jobId) {
    return new FunctionFailedException(viewName, jobId, function, where, firstCause, getCause());
  }

  /** Whether the message names the view and the job. */
  public boolean named() {
    return viewName != null;
  }

  /** What failed, with its class. */
  public String function() {
    return function;
  }

  /** The function's own error, {@code class: message}. */
  public String firstCause() {
    return firstCause;
  }
}
