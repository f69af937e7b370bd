package io.lancerest.client.model;

/** The spec's {@code AlterTransactionUnsetProperty}. */
public record AlterTransactionUnsetProperty(
    String key,
    String mode) {
}
