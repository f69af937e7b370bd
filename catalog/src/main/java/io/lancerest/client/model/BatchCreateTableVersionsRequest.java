package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code BatchCreateTableVersionsRequest}. Request to atomically create new version
 * entries for multiple tables. Required: {@code entries}.
 */
public record BatchCreateTableVersionsRequest(
    List<CreateTableVersionEntry> entries,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  /** This operation has no {@code {id}} in its route. */
  @Override
  public List<String> id() {
    return null;
  }

  public BatchCreateTableVersionsRequest(List<CreateTableVersionEntry> entries) {
    this(entries, null, null);
  }
}
