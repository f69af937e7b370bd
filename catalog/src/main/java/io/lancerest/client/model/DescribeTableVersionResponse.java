package io.lancerest.client.model;

import java.util.Map;

/**
 * The spec's {@code DescribeTableVersionResponse}. Response containing the table version
 * information. Required: {@code version}.
 */
public record DescribeTableVersionResponse(
    TableVersion version,
    Map<String, String> context) {
}
