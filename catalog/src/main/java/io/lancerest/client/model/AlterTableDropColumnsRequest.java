package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code AlterTableDropColumnsRequest}. Required: {@code columns}. */
public record AlterTableDropColumnsRequest(
    List<String> id,
    String branch,
    List<String> columns,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public AlterTableDropColumnsRequest(List<String> id, String branch, List<String> columns) {
    this(id, branch, columns, null, null);
  }
}
