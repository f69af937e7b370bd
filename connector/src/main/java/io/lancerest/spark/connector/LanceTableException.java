package io.lancerest.spark.connector;

/**
 * A Lance dataset operation failed for a named table. {@link #reason()} lets the catalog map it to
 * Spark's own exceptions (for example {@code NOT_FOUND} to {@code NoSuchTableException}) without
 * parsing messages.
 */
public class LanceTableException extends RuntimeException {

  /** Why the operation failed. */
  public enum Reason {
    /** No dataset at the table's location (or it cannot be read). */
    NOT_FOUND,
    /** A dataset already exists where a new one was to be created. */
    ALREADY_EXISTS,
    /** The requested change is not valid for this table (bad column, unsupported type, ...). */
    INVALID_CHANGE,
    /** Lance refused or failed the operation; the cause carries its message. */
    OPERATION_FAILED
  }

  private final Reason reason;
  private final String table;

  public LanceTableException(Reason reason, String table, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
    this.table = table;
  }

  public LanceTableException(Reason reason, String table, String message) {
    this(reason, table, message, null);
  }

  public Reason reason() {
    return reason;
  }

  /** Display name of the table the operation was about. */
  public String table() {
    return table;
  }
}
