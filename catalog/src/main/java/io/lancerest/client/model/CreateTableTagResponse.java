package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code CreateTableTagResponse}. Response for create tag operation. */
public record CreateTableTagResponse(
    String transactionId,
    Map<String, String> context) {
}
