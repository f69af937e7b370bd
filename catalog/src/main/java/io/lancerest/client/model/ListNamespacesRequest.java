package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** ListNamespaces: one page of the children of {@code id} (empty id = root). */
public record ListNamespacesRequest(
    List<String> id, String pageToken, Integer limit,
    Identity identity, Map<String, String> context) implements LanceRequest {
  public ListNamespacesRequest(List<String> id, String pageToken, Integer limit) {
    this(id, pageToken, limit, null, null);
  }
}
