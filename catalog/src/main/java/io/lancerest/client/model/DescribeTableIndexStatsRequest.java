package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code DescribeTableIndexStatsRequest}. */
public record DescribeTableIndexStatsRequest(
    List<String> id,
    Long version,
    String branch,
    String indexName,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DescribeTableIndexStatsRequest(
      List<String> id,
      Long version,
      String branch,
      String indexName) {
    this(id, version, branch, indexName, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link DescribeTableIndexStatsRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private Long version;
    private String branch;
    private String indexName;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
      return this;
    }

    public Builder version(Long value) {
      this.version = value;
      return this;
    }

    public Builder branch(String value) {
      this.branch = value;
      return this;
    }

    public Builder indexName(String value) {
      this.indexName = value;
      return this;
    }

    public Builder identity(Identity value) {
      this.identity = value;
      return this;
    }

    public Builder context(Map<String, String> value) {
      this.context = value;
      return this;
    }

    public DescribeTableIndexStatsRequest build() {
      return new DescribeTableIndexStatsRequest(id, version, branch, indexName, identity, context);
    }
  }
}
