package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code AlterTableDropColumnsResponse}. Required: {@code version}. */
public record AlterTableDropColumnsResponse(
    String transactionId,
    Long version,
    Map<String, String> context) {
}
