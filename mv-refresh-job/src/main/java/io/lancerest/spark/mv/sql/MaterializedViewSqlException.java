package io.lancerest.spark.mv.sql;

import io.lancerest.spark.mv.error.MaterializedViewException;

/** A materialized-view statement does not parse; the message names the offending token. */
public class MaterializedViewSqlException extends MaterializedViewException {
  private final int position;

  public MaterializedViewSqlException(String problem, String sql, int position) {
    super(problem + " at position " + position + ":\n" + lineOf(sql, position) + "\n"
        + " ".repeat(columnOf(sql, position)) + "^");
    this.position = position;
  }

  /** Offset of the problem in the statement text. */
  public int position() {
    return position;
  }

  private static String lineOf(String sql, int position) {
    int p = Math.min(position, sql.length());
    int start = sql.lastIndexOf('\n', p - 1) + 1;
    int end = sql.indexOf('\n', p);
    return sql.substring(start, end < 0 ? sql.length() : end);
  }

  private static int columnOf(String sql, int position) {
    int p = Math.min(position, sql.length());
    int nl = sql.lastIndexOf('\n', p - 1);
    return p - (nl + 1);
  }
}
