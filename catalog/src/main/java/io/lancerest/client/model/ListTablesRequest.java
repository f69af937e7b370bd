package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** ListTables: one page of the tables directly in namespace {@code id}. */
public record ListTablesRequest(
    List<String> id, String pageToken, Integer limit, Boolean includeDeclared,
    Identity identity, Map<String, String> context) implements LanceRequest {
  public ListTablesRequest(List<String> id, String pageToken, Integer limit) {
    this(id, pageToken, limit, null, null, null);
  }
}
