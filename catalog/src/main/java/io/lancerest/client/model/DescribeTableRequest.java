package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * DescribeTable. {@code version}, {@code tag} or {@code branch} select what to describe;
 * {@code withTableUri}, {@code loadDetailedMetadata} and {@code checkDeclared} are sent as query
 * parameters as well as in the body, as the spec lists them in both places.
 */
public record DescribeTableRequest(
    List<String> id, Long version, String tag, String branch,
    Boolean withTableUri, Boolean loadDetailedMetadata, Boolean checkDeclared,
    Boolean vendCredentials, Identity identity, Map<String, String> context)
    implements LanceRequest {

  public static DescribeTableRequest of(List<String> id) {
    return new DescribeTableRequest(id, null, null, null, null, null, null, null, null, null);
  }

  public DescribeTableRequest withVersion(Long v) {
    return new DescribeTableRequest(id, v, tag, branch, withTableUri, loadDetailedMetadata,
        checkDeclared, vendCredentials, identity, context);
  }

  public DescribeTableRequest withVendCredentials(Boolean v) {
    return new DescribeTableRequest(id, version, tag, branch, withTableUri, loadDetailedMetadata,
        checkDeclared, v, identity, context);
  }

  public DescribeTableRequest withLoadDetailedMetadata(Boolean v) {
    return new DescribeTableRequest(id, version, tag, branch, withTableUri, v,
        checkDeclared, vendCredentials, identity, context);
  }
}
