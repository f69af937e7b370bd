package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code BatchCommitTablesResponse}. Response for a batch commit of table operations.
 * Required: {@code results}.
 */
public record BatchCommitTablesResponse(
    String transactionId,
    List<CommitTableResult> results,
    Map<String, String> context) {
  public BatchCommitTablesResponse {
    results = results == null ? List.of() : results;
  }
}
