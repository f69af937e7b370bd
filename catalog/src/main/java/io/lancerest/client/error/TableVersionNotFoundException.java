package io.lancerest.client.error;

/** The table version does not exist. */
public class TableVersionNotFoundException extends NotFoundException {
  public TableVersionNotFoundException(ErrorDetails details) {
    super(details);
  }

  public TableVersionNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
