package io.lancerest.client.error;

/** The namespace does not exist. */
public class NamespaceNotFoundException extends NotFoundException {
  public NamespaceNotFoundException(ErrorDetails details) {
    super(details);
  }

  public NamespaceNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
