package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code DeleteTableBranchRequest}. Required: {@code name}. */
public record DeleteTableBranchRequest(
    List<String> id,
    String name,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DeleteTableBranchRequest(List<String> id, String name) {
    this(id, name, null, null);
  }
}
