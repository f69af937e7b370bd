package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code DescribeTransactionRequest}. */
public record DescribeTransactionRequest(
    List<String> id,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DescribeTransactionRequest(List<String> id) {
    this(id, null, null);
  }
}
