package io.lancerest.client.model;

/** The spec's {@code StructuredFtsQuery}. Required: {@code query}. */
public record StructuredFtsQuery(
    FtsQuery query) {
}
