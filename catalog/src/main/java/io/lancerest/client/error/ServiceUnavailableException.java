package io.lancerest.client.error;

/** The server is unavailable (HTTP 503 or a gateway error) and retries were exhausted. */
public class ServiceUnavailableException extends LanceRestException {
  public ServiceUnavailableException(ErrorDetails details) {
    super(details);
  }

  public ServiceUnavailableException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
