package io.lancerest.client.error;

/** The table does not exist. */
public class TableNotFoundException extends NotFoundException {
  public TableNotFoundException(ErrorDetails details) {
    super(details);
  }

  public TableNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
