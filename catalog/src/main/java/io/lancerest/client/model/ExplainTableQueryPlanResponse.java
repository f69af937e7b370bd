package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code ExplainTableQueryPlanResponse}. Required: {@code plan}. */
public record ExplainTableQueryPlanResponse(
    String plan,
    Map<String, String> context) {
}
