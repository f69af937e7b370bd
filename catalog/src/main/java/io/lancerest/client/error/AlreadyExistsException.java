package io.lancerest.client.error;

/** The object the call would create exists already. */
public class AlreadyExistsException extends LanceRestException {
  public AlreadyExistsException(ErrorDetails details) {
    super(details);
  }

  public AlreadyExistsException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
