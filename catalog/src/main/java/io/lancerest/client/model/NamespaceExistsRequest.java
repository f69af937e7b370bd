package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

public record NamespaceExistsRequest(
    List<String> id, Identity identity, Map<String, String> context) implements LanceRequest {
  public NamespaceExistsRequest(List<String> id) {
    this(id, null, null);
  }
}
