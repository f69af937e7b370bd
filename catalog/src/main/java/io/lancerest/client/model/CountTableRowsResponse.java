package io.lancerest.client.model;

import java.util.Map;

/** The spec's {@code CountTableRowsResponse}. Response containing the count of rows. */
public record CountTableRowsResponse(
    Long count,
    Map<String, String> context) {
}
