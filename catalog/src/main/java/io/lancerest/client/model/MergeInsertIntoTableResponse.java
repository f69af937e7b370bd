package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code MergeInsertIntoTableResponse}. Response from merge insert operation. */
public record MergeInsertIntoTableResponse(
    String transactionId,
    Long numUpdatedRows,
    Long numInsertedRows,
    Long numDeletedRows,
    Long version,
    Map<String, String> context) {
}
