package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code ListTableIndicesResponse}. Required: {@code indexes}. */
public record ListTableIndicesResponse(
    List<IndexContent> indexes,
    String pageToken,
    Map<String, String> context) {
  public ListTableIndicesResponse {
    indexes = indexes == null ? List.of() : indexes;
  }
}
