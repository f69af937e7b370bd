package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code BatchCreateTableVersionsResponse}. Response for batch creating table
 * versions. Required: {@code versions}.
 */
public record BatchCreateTableVersionsResponse(
    String transactionId,
    List<TableVersion> versions,
    Map<String, String> context) {
  public BatchCreateTableVersionsResponse {
    versions = versions == null ? List.of() : versions;
  }
}
