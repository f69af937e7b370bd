package io.lancerest.client.model;

/**
 * The spec's {@code FragmentSummary}. Required: {@code min}, {@code max}, {@code mean}, {@code
 * p25}, {@code p50}, {@code p75}, {@code p99}.
 */
public record FragmentSummary(
    Long min,
    Long max,
    Long mean,
    Long p25,
    Long p50,
    Long p75,
    Long p99) {
}
