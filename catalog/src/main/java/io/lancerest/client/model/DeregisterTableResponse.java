package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code DeregisterTableResponse}. */
public record DeregisterTableResponse(
    String transactionId,
    List<String> id,
    String location,
    Map<String, String> properties,
    Map<String, String> context) {
}
