package io.lancerest.client.model;

/** The spec's {@code CommitTableResult}. Result of a single operation within a batch commit. */
public record CommitTableResult(
    DeclareTableResponse declareTable,
    CreateTableVersionResponse createTableVersion,
    BatchDeleteTableVersionsResponse deleteTableVersions,
    DeregisterTableResponse deregisterTable) {
}
