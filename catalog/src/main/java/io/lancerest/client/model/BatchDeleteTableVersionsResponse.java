package io.lancerest.client.model;

import java.util.Map;

/**
 * The spec's {@code BatchDeleteTableVersionsResponse}. Response for deleting table version
 * records.
 */
public record BatchDeleteTableVersionsResponse(
    Long deletedCount,
    String transactionId,
    Map<String, String> context) {
}
