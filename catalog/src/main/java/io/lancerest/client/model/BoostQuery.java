package io.lancerest.client.model;

/**
 * The spec's {@code BoostQuery}. Boost query that scores documents matching positive query higher
 * and negative query lower. Required: {@code positive}, {@code negative}.
 */
public record BoostQuery(
    FtsQuery positive,
    FtsQuery negative,
    Float negativeBoost) {
}
