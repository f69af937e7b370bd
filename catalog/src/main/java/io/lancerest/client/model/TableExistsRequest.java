package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code TableExistsRequest}. */
public record TableExistsRequest(
    List<String> id,
    Long version,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public TableExistsRequest(List<String> id, Long version) {
    this(id, version, null, null);
  }
}
