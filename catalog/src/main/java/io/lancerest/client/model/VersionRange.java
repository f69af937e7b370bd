package io.lancerest.client.model;

/**
 * The spec's {@code VersionRange}. A range of versions to delete (start inclusive, end
 * exclusive). Required: {@code startVersion}, {@code endVersion}.
 */
public record VersionRange(
    Long startVersion,
    Long endVersion) {
}
