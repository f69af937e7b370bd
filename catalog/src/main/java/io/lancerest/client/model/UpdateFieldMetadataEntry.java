package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code UpdateFieldMetadataEntry}. Required: {@code path}, {@code metadata}. */
public record UpdateFieldMetadataEntry(
    String path,
    Map<String, String> metadata,
    Boolean replace) {
}
