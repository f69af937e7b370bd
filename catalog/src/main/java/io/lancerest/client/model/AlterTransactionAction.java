package io.lancerest.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The spec's {@code AlterTransactionAction}. A single action that could be performed to alter a
 * transaction.
 */
public record AlterTransactionAction(
    @JsonProperty("setStatusAction") AlterTransactionSetStatus setStatusAction,
    @JsonProperty("setPropertyAction") AlterTransactionSetProperty setPropertyAction,
    @JsonProperty("unsetPropertyAction") AlterTransactionUnsetProperty unsetPropertyAction) {
}
