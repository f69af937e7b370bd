package io.lancerest.client.error;

/** The server rejected the request as invalid (bad argument, schema validation). */
public class InvalidInputException extends LanceRestException {
  public InvalidInputException(ErrorDetails details) {
    super(details);
  }

  public InvalidInputException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
