package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code QueryColumns}. Optional field paths to return. */
public record QueryColumns(
    List<String> columnNames,
    Map<String, String> columnAliases) {
}
