package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code RenameTableResponse}. */
public record RenameTableResponse(
    String transactionId,
    Map<String, String> context) {
}
