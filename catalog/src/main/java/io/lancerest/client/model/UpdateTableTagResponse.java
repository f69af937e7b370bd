package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code UpdateTableTagResponse}. Response for update tag operation. */
public record UpdateTableTagResponse(
    String transactionId,
    Map<String, String> context) {
}
