package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code ListTableBranchesRequest}. */
public record ListTableBranchesRequest(
    List<String> id,
    String pageToken,
    Integer limit,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public ListTableBranchesRequest(List<String> id, String pageToken, Integer limit) {
    this(id, pageToken, limit, null, null);
  }
}
