package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code GetTableTagVersionRequest}. Required: {@code tag}. */
public record GetTableTagVersionRequest(
    List<String> id,
    String tag,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public GetTableTagVersionRequest(List<String> id, String tag) {
    this(id, tag, null, null);
  }
}
