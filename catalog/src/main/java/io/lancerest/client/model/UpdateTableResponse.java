package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code UpdateTableResponse}. Required: {@code updatedRows}, {@code version}. */
public record UpdateTableResponse(
    String transactionId,
    Long updatedRows,
    Long version,
    Map<String, String> properties,
    Map<String, String> context) {
}
