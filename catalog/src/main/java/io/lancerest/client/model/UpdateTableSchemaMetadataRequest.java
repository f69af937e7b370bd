package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code UpdateTableSchemaMetadataRequest}. */
public record UpdateTableSchemaMetadataRequest(
    List<String> id,
    String branch,
    Map<String, String> metadata,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public UpdateTableSchemaMetadataRequest(
      List<String> id,
      String branch,
      Map<String, String> metadata) {
    this(id, branch, metadata, null, null);
  }
}
