package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code DescribeTableVersionRequest}. Request to describe a specific table version.
 */
public record DescribeTableVersionRequest(
    List<String> id,
    Long version,
    String branch,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DescribeTableVersionRequest(List<String> id, Long version, String branch) {
    this(id, version, branch, null, null);
  }
}
