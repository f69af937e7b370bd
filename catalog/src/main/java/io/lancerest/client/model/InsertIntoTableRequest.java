package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code InsertIntoTableRequest}. Request for inserting records into a table,
 * excluding the Arrow IPC stream.
 */
public record InsertIntoTableRequest(
    List<String> id,
    String branch,
    String mode,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public InsertIntoTableRequest(List<String> id, String branch, String mode) {
    this(id, branch, mode, null, null);
  }
}
