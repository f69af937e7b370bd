package io.lancerest.client.model;

import java.util.List;

/** The spec's {@code MultiMatchQuery}. Required: {@code matchQueries}. */
public record MultiMatchQuery(
    List<MatchQuery> matchQueries) {
}
