package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code DropTableIndexRequest}. */
public record DropTableIndexRequest(
    List<String> id,
    String branch,
    String indexName,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DropTableIndexRequest(List<String> id, String branch, String indexName) {
    this(id, branch, indexName, null, null);
  }
}
