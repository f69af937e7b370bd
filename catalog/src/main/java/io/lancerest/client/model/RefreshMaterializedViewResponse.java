package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code RefreshMaterializedViewResponse}. Required: {@code jobId}. */
public record RefreshMaterializedViewResponse(
    String jobId,
    Map<String, String> context) {
}
