package io.lancerest.client.model;

import java.util.Map;

public record DescribeNamespaceResponse(
    Map<String, String> properties, Map<String, String> context) {
  public DescribeNamespaceResponse {
    properties = properties == null ? Map.of() : properties;
  }
}
