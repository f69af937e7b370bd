package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code RestoreTableResponse}. Response for restore table operation. */
public record RestoreTableResponse(
    String transactionId,
    Map<String, String> context) {
}
