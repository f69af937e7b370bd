package io.lancerest.client.error;

/** The namespace exists already. */
public class NamespaceAlreadyExistsException extends AlreadyExistsException {
  public NamespaceAlreadyExistsException(ErrorDetails details) {
    super(details);
  }

  public NamespaceAlreadyExistsException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
