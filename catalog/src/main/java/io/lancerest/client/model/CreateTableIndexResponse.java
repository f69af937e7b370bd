package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code CreateTableIndexResponse}. Response for create index operation. */
public record CreateTableIndexResponse(
    String transactionId,
    Map<String, String> context) {
}
