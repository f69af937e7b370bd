package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** One page of child namespace names; {@code pageToken} null or empty at the end. */
public record ListNamespacesResponse(
    List<String> namespaces, String pageToken, Map<String, String> context) {
  public ListNamespacesResponse {
    namespaces = namespaces == null ? List.of() : namespaces;
  }
}
