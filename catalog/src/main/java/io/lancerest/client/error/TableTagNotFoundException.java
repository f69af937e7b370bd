package io.lancerest.client.error;

/** The table tag does not exist. */
public class TableTagNotFoundException extends NotFoundException {
  public TableTagNotFoundException(ErrorDetails details) {
    super(details);
  }

  public TableTagNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
