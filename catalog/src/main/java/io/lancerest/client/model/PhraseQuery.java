package io.lancerest.client.model;

/** The spec's {@code PhraseQuery}. Required: {@code terms}. */
public record PhraseQuery(
    String column,
    Integer slop,
    String terms) {
}
