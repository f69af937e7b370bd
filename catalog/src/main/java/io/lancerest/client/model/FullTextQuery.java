package io.lancerest.client.model;

/** The spec's {@code FullTextQuery}. Optional full-text search query. */
public record FullTextQuery(
    StringFtsQuery stringQuery,
    StructuredFtsQuery structuredQuery) {
}
