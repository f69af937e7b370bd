package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code GetTableStatsRequest}. */
public record GetTableStatsRequest(
    List<String> id,
    String branch,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public GetTableStatsRequest(List<String> id, String branch) {
    this(id, branch, null, null);
  }
}
