package io.lancerest.client.error;

/** The server did not accept the credentials (HTTP 401). */
public class UnauthenticatedException extends LanceRestException {
  public UnauthenticatedException(ErrorDetails details) {
    super(details);
  }

  public UnauthenticatedException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
