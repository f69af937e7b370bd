package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code AlterTableAlterColumnsRequest}. Required: {@code alterations}. */
public record AlterTableAlterColumnsRequest(
    List<String> id,
    String branch,
    List<AlterColumnsEntry> alterations,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public AlterTableAlterColumnsRequest(
      List<String> id,
      String branch,
      List<AlterColumnsEntry> alterations) {
    this(id, branch, alterations, null, null);
  }
}
