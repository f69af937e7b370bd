package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code AnalyzeTableQueryPlanResponse}. Required: {@code analysis}. */
public record AnalyzeTableQueryPlanResponse(
    String analysis,
    Map<String, String> context) {
}
