package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code CreateTableVersionEntry}. An entry for creating a new table version in a
 * batch operation. Required: {@code id}, {@code version}, {@code manifestPath}.
 */
public record CreateTableVersionEntry(
    List<String> id,
    Long version,
    String branch,
    String manifestPath,
    Long manifestSize,
    String eTag,
    Map<String, String> metadata,
    String namingScheme) {
}
