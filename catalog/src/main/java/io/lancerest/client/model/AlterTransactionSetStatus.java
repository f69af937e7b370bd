package io.lancerest.client.model;

/** The spec's {@code AlterTransactionSetStatus}. */
public record AlterTransactionSetStatus(
    String status) {
}
