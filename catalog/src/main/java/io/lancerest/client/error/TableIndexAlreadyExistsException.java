package io.lancerest.client.error;

/** The index exists already. */
public class TableIndexAlreadyExistsException extends AlreadyExistsException {
  public TableIndexAlreadyExistsException(ErrorDetails details) {
    super(details);
  }

  public TableIndexAlreadyExistsException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
