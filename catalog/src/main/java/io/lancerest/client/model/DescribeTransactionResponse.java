package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code DescribeTransactionResponse}. Required: {@code status}. */
public record DescribeTransactionResponse(
    String status,
    Map<String, String> properties,
    Map<String, String> context) {
}
