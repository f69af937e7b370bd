package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code DeleteTableBranchResponse}. Response for delete branch operation. */
public record DeleteTableBranchResponse(
    String transactionId,
    Map<String, String> context) {
}
