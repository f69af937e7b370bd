package io.lancerest.client.model;

import java.util.Map;

/**
 * The spec's {@code AddVirtualColumnOutputEntry}. Required: {@code column}, {@code structField},
 * {@code dataType}, {@code nullable}.
 */
public record AddVirtualColumnOutputEntry(
    String column,
    String structField,
    Object dataType,
    Boolean nullable,
    Map<String, String> metadata) {
}
