package io.lancerest.client.model;

/**
 * The spec's {@code FragmentStats}. Required: {@code numFragments}, {@code numSmallFragments},
 * {@code lengths}.
 */
public record FragmentStats(
    Long numFragments,
    Long numSmallFragments,
    FragmentSummary lengths) {
}
