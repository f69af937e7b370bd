package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** DropNamespace. {@code mode}: Fail or Skip; {@code behavior}: Restrict or Cascade. */
public record DropNamespaceRequest(
    List<String> id, String mode, String behavior,
    Identity identity, Map<String, String> context) implements LanceRequest {
  public DropNamespaceRequest(List<String> id, String mode, String behavior) {
    this(id, mode, behavior, null, null);
  }
}
