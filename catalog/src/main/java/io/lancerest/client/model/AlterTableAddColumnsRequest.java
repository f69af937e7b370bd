package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code AlterTableAddColumnsRequest}. Required: {@code newColumns}. */
public record AlterTableAddColumnsRequest(
    List<String> id,
    String branch,
    List<AddColumnsEntry> newColumns,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public AlterTableAddColumnsRequest(
      List<String> id,
      String branch,
      List<AddColumnsEntry> newColumns) {
    this(id, branch, newColumns, null, null);
  }
}
