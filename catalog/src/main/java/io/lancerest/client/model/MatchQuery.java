package io.lancerest.client.model;

/** The spec's {@code MatchQuery}. Required: {@code terms}. */
public record MatchQuery(
    Float boost,
    String column,
    Integer fuzziness,
    Long maxExpansions,
    String operator,
    Integer prefixLength,
    String terms) {
}
