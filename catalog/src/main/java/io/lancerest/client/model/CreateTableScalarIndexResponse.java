package io.lancerest.client.model;

import java.util.Map;

/**
 * The spec's {@code CreateTableScalarIndexResponse}. Response for create scalar index operation.
 */
public record CreateTableScalarIndexResponse(
    String transactionId,
    Map<String, String> context) {
}
