package io.lancerest.client.error;

/** The table index does not exist. */
public class TableIndexNotFoundException extends NotFoundException {
  public TableIndexNotFoundException(ErrorDetails details) {
    super(details);
  }

  public TableIndexNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
