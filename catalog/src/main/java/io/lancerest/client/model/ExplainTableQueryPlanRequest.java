package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code ExplainTableQueryPlanRequest}. Required: {@code query}. */
public record ExplainTableQueryPlanRequest(
    List<String> id,
    String branch,
    QueryTableRequest query,
    Boolean verbose,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public ExplainTableQueryPlanRequest(
      List<String> id,
      String branch,
      QueryTableRequest query,
      Boolean verbose) {
    this(id, branch, query, verbose, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link ExplainTableQueryPlanRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String branch;
    private QueryTableRequest query;
    private Boolean verbose;
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

    public Builder query(QueryTableRequest value) {
      this.query = value;
      return this;
    }

    public Builder verbose(Boolean value) {
      this.verbose = value;
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

    public ExplainTableQueryPlanRequest build() {
      return new ExplainTableQueryPlanRequest(id, branch, query, verbose, identity, context);
    }
  }
}
