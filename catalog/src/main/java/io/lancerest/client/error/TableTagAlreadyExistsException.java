package io.lancerest.client.error;

/** The tag exists already. */
public class TableTagAlreadyExistsException extends AlreadyExistsException {
  public TableTagAlreadyExistsException(ErrorDetails details) {
    super(details);
  }

  public TableTagAlreadyExistsException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
