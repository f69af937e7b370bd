package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code DescribeTableIndexStatsResponse}. */
public record DescribeTableIndexStatsResponse(
    String distanceType,
    String indexType,
    Long numIndexedRows,
    Long numUnindexedRows,
    Integer numIndices,
    Map<String, String> context) {
}
