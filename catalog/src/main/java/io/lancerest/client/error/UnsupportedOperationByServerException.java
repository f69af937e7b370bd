package io.lancerest.client.error;

/**
 * The server does not implement the operation (spec code 0, HTTP 406 or 501, an unrouted path,
 * or a "not supported / not implemented" answer).
 */
public class UnsupportedOperationByServerException extends LanceRestException {
  public UnsupportedOperationByServerException(ErrorDetails details) {
    super(details);
  }

  public UnsupportedOperationByServerException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
