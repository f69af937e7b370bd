package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

public record DescribeNamespaceRequest(
    List<String> id, Identity identity, Map<String, String> context) implements LanceRequest {
  public DescribeNamespaceRequest(List<String> id) {
    this(id, null, null);
  }
}
