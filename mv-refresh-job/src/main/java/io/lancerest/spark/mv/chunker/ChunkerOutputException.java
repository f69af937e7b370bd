package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.error.MaterializedViewException;

/**
 * A chunker emitted a row that does not match the declared output schema. This is a bug in the
 * chunker (or its declared schema), not a transient failure: it is never retried or skipped and
 * the refresh commits nothing.
 */
public class ChunkerOutputException extends MaterializedViewException {
  private final String column;

  public ChunkerOutputException(String column, String message) {
    super(message);
    this.column = column;
  }

  /** The offending output column. */
  public String column() {
    return column;
  }
}
