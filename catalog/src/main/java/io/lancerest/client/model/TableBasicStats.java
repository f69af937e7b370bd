package io.lancerest.client.model;

/**
 * The spec's {@code TableBasicStats}. Required: {@code numDeletedRows}, {@code numFragments}.
 */
public record TableBasicStats(
    Long numDeletedRows,
    Long numFragments) {
}
