package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code UpdateFieldMetadataRequest}. Required: {@code updates}. */
public record UpdateFieldMetadataRequest(
    List<String> id,
    String branch,
    List<UpdateFieldMetadataEntry> updates,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public UpdateFieldMetadataRequest(
      List<String> id,
      String branch,
      List<UpdateFieldMetadataEntry> updates) {
    this(id, branch, updates, null, null);
  }
}
