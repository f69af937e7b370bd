package io.lancerest.spark.connector;

/**
 * Time travel asked for a version, tag or timestamp the table does not have. An {@link
 * IllegalArgumentException} because the user's query, not the system, is at fault.
 */
public class UnknownTableVersionException extends IllegalArgumentException {

  private final String table;
  private final String requested;

  public UnknownTableVersionException(String table, String requested, String hint) {
    super("Table " + table + " has no " + requested + ". " + hint);
    this.table = table;
    this.requested = requested;
  }

  public String table() {
    return table;
  }

  /** What was asked for, e.g. {@code "version 7"} or {@code "tag 'nightly'"}. */
  public String requested() {
    return requested;
  }
}
