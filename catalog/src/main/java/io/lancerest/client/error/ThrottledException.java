package io.lancerest.client.error;

/** The server throttled the request (HTTP 429) and retries were exhausted. */
public class ThrottledException extends LanceRestException {
  public ThrottledException(ErrorDetails details) {
    super(details);
  }

  public ThrottledException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
