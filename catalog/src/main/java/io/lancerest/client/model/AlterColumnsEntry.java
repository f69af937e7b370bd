package io.lancerest.client.model;

/** The spec's {@code AlterColumnsEntry}. Required: {@code path}. */
public record AlterColumnsEntry(
    String path,
    Object dataType,
    String rename,
    Boolean nullable,
    AlterVirtualColumnEntry virtualColumn) {
}
