package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code AlterTableAlterColumnsResponse}. Required: {@code version}. */
public record AlterTableAlterColumnsResponse(
    Long version,
    Map<String, String> context) {
}
