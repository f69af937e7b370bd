package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code AlterTransactionResponse}. Required: {@code status}. */
public record AlterTransactionResponse(
    String status,
    Map<String, String> properties,
    Map<String, String> context) {
}
