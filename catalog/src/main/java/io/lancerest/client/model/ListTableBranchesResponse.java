package io.lancerest.client.model;

import java.util.Map;

/**
 * The spec's {@code ListTableBranchesResponse}. Response containing table branches. Required:
 * {@code branches}.
 */
public record ListTableBranchesResponse(
    Map<String, BranchContents> branches,
    String pageToken,
    Map<String, String> context) {
  public ListTableBranchesResponse {
    branches = branches == null ? Map.of() : branches;
  }
}
