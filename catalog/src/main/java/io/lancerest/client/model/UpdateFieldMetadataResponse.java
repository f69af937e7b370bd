package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code UpdateFieldMetadataResponse}. Required: {@code version}. */
public record UpdateFieldMetadataResponse(
    Long version,
    Map<String, Map<String, String>> fields,
    Map<String, String> context) {
}
