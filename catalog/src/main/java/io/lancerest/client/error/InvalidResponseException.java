package io.lancerest.client.error;

/** The server answered 2xx with a body that is not the response the spec defines. */
public class InvalidResponseException extends LanceRestException {
  public InvalidResponseException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
