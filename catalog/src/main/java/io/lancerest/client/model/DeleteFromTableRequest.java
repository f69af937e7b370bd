package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code DeleteFromTableRequest}. Delete data from table based on a SQL predicate.
 * Required: {@code predicate}.
 */
public record DeleteFromTableRequest(
    List<String> id,
    String branch,
    String predicate,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DeleteFromTableRequest(List<String> id, String branch, String predicate) {
    this(id, branch, predicate, null, null);
  }
}
