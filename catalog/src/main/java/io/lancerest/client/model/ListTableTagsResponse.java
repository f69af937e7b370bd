package io.lancerest.client.model;

import java.util.Map;

/**
 * The spec's {@code ListTableTagsResponse}. Response containing table tags. Required: {@code
 * tags}.
 */
public record ListTableTagsResponse(
    Map<String, TagContents> tags,
    String pageToken,
    Map<String, String> context) {
  public ListTableTagsResponse {
    tags = tags == null ? Map.of() : tags;
  }
}
