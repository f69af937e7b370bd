package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.error.MaterializedViewException;

/** A chunker refresh failed; the view keeps its previous version. */
public class ChunkerRefreshException extends MaterializedViewException {
  public ChunkerRefreshException(String message) {
    super(message);
  }

  public ChunkerRefreshException(String message, Throwable cause) {
    super(message, cause);
  }
}
