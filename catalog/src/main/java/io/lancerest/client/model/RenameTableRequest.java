package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code RenameTableRequest}. Required: {@code newTableName}. */
public record RenameTableRequest(
    List<String> id,
    String newTableName,
    List<String> newNamespaceId,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public RenameTableRequest(List<String> id, String newTableName, List<String> newNamespaceId) {
    this(id, newTableName, newNamespaceId, null, null);
  }
}
