package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code GetTableTagVersionResponse}. Required: {@code version}. */
public record GetTableTagVersionResponse(
    Long version,
    String branch,
    Map<String, String> context) {
}
