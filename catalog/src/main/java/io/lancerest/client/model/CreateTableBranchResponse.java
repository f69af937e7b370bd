package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code CreateTableBranchResponse}. Response for create branch operation. */
public record CreateTableBranchResponse(
    String transactionId,
    Map<String, String> context) {
}
