package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code ListTableVersionsRequest}. */
public record ListTableVersionsRequest(
    List<String> id,
    String branch,
    String pageToken,
    Integer limit,
    Boolean descending,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public ListTableVersionsRequest(
      List<String> id,
      String branch,
      String pageToken,
      Integer limit,
      Boolean descending) {
    this(id, branch, pageToken, limit, descending, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link ListTableVersionsRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String branch;
    private String pageToken;
    private Integer limit;
    private Boolean descending;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
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

    public Builder descending(Boolean value) {
      this.descending = value;
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

    public ListTableVersionsRequest build() {
      return new ListTableVersionsRequest(
          id,
          branch,
          pageToken,
          limit,
          descending,
          identity,
          context);
    }
  }
}
