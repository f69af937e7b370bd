package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code AlterTableAddColumnsResponse}. Required: {@code version}. */
public record AlterTableAddColumnsResponse(
    Long version,
    Map<String, String> context) {
}
