package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code ListTableVersionsResponse}. Required: {@code versions}. */
public record ListTableVersionsResponse(
    List<TableVersion> versions,
    String pageToken,
    Map<String, String> context) {
  public ListTableVersionsResponse {
    versions = versions == null ? List.of() : versions;
  }
}
