package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code CreateMaterializedViewResponse}. Required: {@code version}. */
public record CreateMaterializedViewResponse(
    Long version,
    String jobId,
    Map<String, String> context) {
}
