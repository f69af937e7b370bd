package io.lancerest.client.error;

/** A column named by the call does not exist. */
public class TableColumnNotFoundException extends NotFoundException {
  public TableColumnNotFoundException(ErrorDetails details) {
    super(details);
  }

  public TableColumnNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
