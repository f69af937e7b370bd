package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.error.MaterializedViewException;

/** A query-view refresh failed; nothing was committed and the view is unchanged. */
public class QueryRefreshException extends MaterializedViewException {
  public QueryRefreshException(String message) {
    super(message);
  }

  public QueryRefreshException(String message, Throwable cause) {
    super(message, cause);
  }
}
