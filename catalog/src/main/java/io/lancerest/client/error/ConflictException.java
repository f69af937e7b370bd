package io.lancerest.client.error;

/** A concurrent modification or an invalid table state; re-read and try again. */
public class ConflictException extends LanceRestException {
  public ConflictException(ErrorDetails details) {
    super(details);
  }

  public ConflictException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
