package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** One page of table names; {@code pageToken} null or empty at the end. */
public record ListTablesResponse(
    List<String> tables, String pageToken, Map<String, String> context) {
  public ListTablesResponse {
    tables = tables == null ? List.of() : tables;
  }
}
