package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code InsertIntoTableResponse}. Response from inserting records into a table. */
public record InsertIntoTableResponse(
    String transactionId,
    Long numInsertedRows,
    Long version,
    Map<String, String> context) {
}
