package io.lancerest.client.model;

/** The spec's {@code AlterTransactionSetProperty}. */
public record AlterTransactionSetProperty(
    String key,
    String value,
    String mode) {
}
