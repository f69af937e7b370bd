package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code CreateTableVersionResponse}. Response for creating a table version. */
public record CreateTableVersionResponse(
    String transactionId,
    TableVersion version,
    Map<String, String> context) {
}
