package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code DropTableIndexResponse}. Response for drop index operation. */
public record DropTableIndexResponse(
    String transactionId,
    Map<String, String> context) {
}
