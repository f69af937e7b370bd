package io.lancerest.client.error;

/** The credentials are valid but lack permission (HTTP 403). */
public class ForbiddenException extends LanceRestException {
  public ForbiddenException(ErrorDetails details) {
    super(details);
  }

  public ForbiddenException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
