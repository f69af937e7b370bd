package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code TableVersion}. Required: {@code version}, {@code manifestPath}. */
public record TableVersion(
    Long version,
    String manifestPath,
    Long manifestSize,
    String eTag,
    Long timestampMillis,
    Map<String, String> metadata) {
}
