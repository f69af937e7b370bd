package io.lancerest.client.error;

/** The client was given an invalid option or an invalid identifier; nothing was sent. */
public class ClientConfigException extends IllegalArgumentException {
  public ClientConfigException(String message) {
    super(message);
  }

  public ClientConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
