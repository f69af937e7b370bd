package io.lancerest.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The spec's {@code FtsQuery}. Full-text search query. */
public record FtsQuery(
    MatchQuery match,
    PhraseQuery phrase,
    BoostQuery boost,
    MultiMatchQuery multiMatch,
    @JsonProperty("boolean") BooleanQuery booleanQuery) {
}
