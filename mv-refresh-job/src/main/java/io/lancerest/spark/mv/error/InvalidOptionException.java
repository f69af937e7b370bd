package io.lancerest.spark.mv.error;

/**
 * A refresh or create option has an unknown name or an invalid value. Thrown by the engine, and
 * by a function's option check ({@code validate}) so that a bad value is reported once, by name,
 * instead of failing every source row.
 */
public class InvalidOptionException extends MaterializedViewException {
  private final String option;
  private final String value;

  public InvalidOptionException(String message) {
    this(message, null, null, null);
  }

  public InvalidOptionException(String message, Throwable cause) {
    this(message, null, null, cause);
  }

  /**
   * {@code <option> must be <allowed>, got '<value>'}, or {@code <option> must be set to
   * <allowed>} when {@code value} is {@code null}; e.g. {@code new InvalidOptionException(
   * "chunk_size", "-3", "a positive whole number")}.
   */
  public InvalidOptionException(String option, String value, String allowed) {
    this(value == null ? option + " must be set to " + allowed
        : option + " must be " + allowed + ", got '" + value + "'", option, value, null);
  }

  private InvalidOptionException(String message, String option, String value, Throwable cause) {
    super(message, cause);
    this.option = option;
    this.value = value;
  }

  /** The option at fault, when the thrower named one; else {@code null}. */
  public String option() {
    return option;
  }

  /** Its value as given ({@code null}: missing, or not named by the thrower). */
  public String value() {
    return value;
  }

  /** This error with {@code suffix} appended to its message (the view, the function). */
  public InvalidOptionException withSuffix(String suffix) {
    return new InvalidOptionException(getMessage() + suffix, option, value, this);
  }
}
