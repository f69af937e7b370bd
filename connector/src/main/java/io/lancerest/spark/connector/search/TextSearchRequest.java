package io.lancerest.spark.connector.search;

import java.io.Serializable;
import java.util.List;

/**
 * A full-text search as the user asked for it, before it is checked against a table.
 *
 * @param query the words to match
 * @param columns the text columns to search, or empty for the table's only full-text indexed one
 * @param k how many rows to return, best scores first
 */
public record TextSearchRequest(String query, List<String> columns, int k)
    implements Serializable {
  public TextSearchRequest {
    columns = List.copyOf(columns);
  }
}
