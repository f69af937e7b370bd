package io.lancerest.client.model;

/** The spec's {@code CommitTableOperation}. A single operation within a batch commit. */
public record CommitTableOperation(
    DeclareTableRequest declareTable,
    CreateTableVersionRequest createTableVersion,
    BatchDeleteTableVersionsRequest deleteTableVersions,
    DeregisterTableRequest deregisterTable) {
}
