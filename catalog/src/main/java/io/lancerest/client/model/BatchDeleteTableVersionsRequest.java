package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code BatchDeleteTableVersionsRequest}. Request to delete table version records.
 * Required: {@code ranges}.
 */
public record BatchDeleteTableVersionsRequest(
    List<String> id,
    String branch,
    List<VersionRange> ranges,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public BatchDeleteTableVersionsRequest(
      List<String> id,
      String branch,
      List<VersionRange> ranges) {
    this(id, branch, ranges, null, null);
  }
}
