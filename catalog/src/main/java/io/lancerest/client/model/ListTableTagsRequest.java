package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code ListTableTagsRequest}. */
public record ListTableTagsRequest(
    List<String> id,
    String pageToken,
    Integer limit,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public ListTableTagsRequest(List<String> id, String pageToken, Integer limit) {
    this(id, pageToken, limit, null, null);
  }
}
