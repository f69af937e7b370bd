package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * ListAllTables ({@code GET /v1/table}). The spec has no schema for it: the route's query
 * parameters are its fields, and the route has no {@code {id}}.
 */
public record ListAllTablesRequest(
    String pageToken, Integer limit, Boolean includeDeclared,
    Identity identity, Map<String, String> context) implements LanceRequest {
  public ListAllTablesRequest(String pageToken, Integer limit, Boolean includeDeclared) {
    this(pageToken, limit, includeDeclared, null, null);
  }

  @Override
  public List<String> id() {
    return null;
  }
}
