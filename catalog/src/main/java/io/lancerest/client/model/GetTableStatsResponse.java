package io.lancerest.client.model;

import java.util.Map;

/**
 * The spec's {@code GetTableStatsResponse}. Required: {@code totalBytes}, {@code numRows}, {@code
 * numIndices}, {@code fragmentStats}.
 */
public record GetTableStatsResponse(
    Long totalBytes,
    Long numRows,
    Long numIndices,
    FragmentStats fragmentStats,
    Map<String, String> context) {
}
