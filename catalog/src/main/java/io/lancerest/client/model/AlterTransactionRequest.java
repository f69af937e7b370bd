package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code AlterTransactionRequest}. Alter a transaction with a list of actions.
 * Required: {@code actions}.
 */
public record AlterTransactionRequest(
    List<String> id,
    List<AlterTransactionAction> actions,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public AlterTransactionRequest(List<String> id, List<AlterTransactionAction> actions) {
    this(id, actions, null, null);
  }
}
