package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** CreateNamespace. {@code mode}: Create (default), ExistOk or Overwrite. */
public record CreateNamespaceRequest(
    List<String> id, String mode, Map<String, String> properties,
    Identity identity, Map<String, String> context) implements LanceRequest {
  public CreateNamespaceRequest(List<String> id, String mode, Map<String, String> properties) {
    this(id, mode, properties, null, null);
  }
}
