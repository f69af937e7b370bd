package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code AlterTableBackfillColumnsResponse}. Required: {@code jobId}. */
public record AlterTableBackfillColumnsResponse(
    String jobId,
    Map<String, String> context) {
}
