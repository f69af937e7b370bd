package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code RestoreTableRequest}. Required: {@code version}. */
public record RestoreTableRequest(
    List<String> id,
    Long version,
    String branch,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public RestoreTableRequest(List<String> id, Long version, String branch) {
    this(id, version, branch, null, null);
  }
}
