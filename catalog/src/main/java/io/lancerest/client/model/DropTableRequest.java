package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code DropTableRequest}. If the table and its data can be immediately deleted,
 * return information of the deleted table.
 */
public record DropTableRequest(
    List<String> id,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DropTableRequest(List<String> id) {
    this(id, null, null);
  }
}
