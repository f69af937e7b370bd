package io.lancerest.client.error;

/** The server failed internally (HTTP 500 or another 5xx). */
public class InternalServerException extends LanceRestException {
  public InternalServerException(ErrorDetails details) {
    super(details);
  }

  public InternalServerException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
