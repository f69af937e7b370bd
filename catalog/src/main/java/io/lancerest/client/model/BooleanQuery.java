package io.lancerest.client.model;

import java.util.List;

/**
 * The spec's {@code BooleanQuery}. Boolean query with must, should, and must_not clauses.
 * Required: {@code must}, {@code mustNot}, {@code should}.
 */
public record BooleanQuery(
    List<FtsQuery> must,
    List<FtsQuery> mustNot,
    List<FtsQuery> should) {
}
