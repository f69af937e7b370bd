package io.lancerest.client.model;

/** The spec's {@code AddColumnsEntry}. Required: {@code name}. */
public record AddColumnsEntry(
    String name,
    String expression,
    String computed,
    AddVirtualColumnEntry virtualColumn) {
}
