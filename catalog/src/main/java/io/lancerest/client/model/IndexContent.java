package io.lancerest.client.model;

import java.util.List;

/**
 * The spec's {@code IndexContent}. Required: {@code indexName}, {@code indexUuid}, {@code
 * columns}, {@code status}.
 */
public record IndexContent(
    String indexName,
    String indexUuid,
    List<String> columns,
    String status,
    String indexType,
    String typeUrl,
    Long numIndexedRows,
    Long numUnindexedRows,
    Long sizeBytes,
    Integer numSegments,
    String createdAt,
    Integer indexVersion,
    String indexDetails) {
}
