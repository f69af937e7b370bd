package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code RegisterTableResponse}. */
public record RegisterTableResponse(
    String transactionId,
    String location,
    Map<String, String> properties,
    Map<String, String> context) {
}
