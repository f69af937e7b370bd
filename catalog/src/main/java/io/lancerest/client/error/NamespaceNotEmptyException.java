package io.lancerest.client.error;

/** The namespace still holds tables or namespaces. */
public class NamespaceNotEmptyException extends LanceRestException {
  public NamespaceNotEmptyException(ErrorDetails details) {
    super(details);
  }

  public NamespaceNotEmptyException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
