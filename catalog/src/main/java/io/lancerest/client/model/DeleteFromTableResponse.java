package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code DeleteFromTableResponse}. */
public record DeleteFromTableResponse(
    String transactionId,
    Long version,
    Map<String, String> context) {
}
