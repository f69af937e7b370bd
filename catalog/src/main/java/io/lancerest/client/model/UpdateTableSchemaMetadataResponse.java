package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code UpdateTableSchemaMetadataResponse}. */
public record UpdateTableSchemaMetadataResponse(
    Map<String, String> metadata,
    String transactionId,
    Map<String, String> context) {
}
