package io.lancerest.client.error;

/** The table exists already. */
public class TableAlreadyExistsException extends AlreadyExistsException {
  public TableAlreadyExistsException(ErrorDetails details) {
    super(details);
  }

  public TableAlreadyExistsException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
