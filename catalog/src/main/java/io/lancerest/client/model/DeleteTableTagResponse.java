package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code DeleteTableTagResponse}. Response for delete tag operation. */
public record DeleteTableTagResponse(
    String transactionId,
    Map<String, String> context) {
}
