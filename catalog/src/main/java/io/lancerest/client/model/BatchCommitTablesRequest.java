package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code BatchCommitTablesRequest}. Request to atomically commit a batch of table
 * operations. Required: {@code operations}.
 */
public record BatchCommitTablesRequest(
    List<CommitTableOperation> operations,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  /** This operation has no {@code {id}} in its route. */
  @Override
  public List<String> id() {
    return null;
  }

  public BatchCommitTablesRequest(List<CommitTableOperation> operations) {
    this(operations, null, null);
  }
}
