package io.lancerest.client.error;

/** The object named by the call does not exist (or the route is unknown to the server). */
public class NotFoundException extends LanceRestException {
  public NotFoundException(ErrorDetails details) {
    super(details);
  }

  public NotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
