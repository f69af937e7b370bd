package io.lancerest.client.model;

import java.util.List;

/** The spec's {@code StringFtsQuery}. Required: {@code query}. */
public record StringFtsQuery(
    List<String> columns,
    String query) {
}
