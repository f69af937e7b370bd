package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code DeregisterTableRequest}. The table content remains available in the storage.
 */
public record DeregisterTableRequest(
    List<String> id,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DeregisterTableRequest(List<String> id) {
    this(id, null, null);
  }
}
