package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code ListTableIndicesRequest}. */
public record ListTableIndicesRequest(
    List<String> id,
    Long version,
    String branch,
    String pageToken,
    Integer limit,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public ListTableIndicesRequest(
      List<String> id,
      Long version,
      String branch,
      String pageToken,
      Integer limit) {
    this(id, version, branch, pageToken, limit, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link ListTableIndicesRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private Long version;
    private String branch;
    private String pageToken;
    private Integer limit;
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

    public Builder pageToken(String value) {
      this.pageToken = value;
      return this;
    }

    public Builder limit(Integer value) {
      this.limit = value;
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

    public ListTableIndicesRequest build() {
      return new ListTableIndicesRequest(id, version, branch, pageToken, limit, identity, context);
    }
  }
}
