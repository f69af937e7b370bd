package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code UpdateTableRequest}. Each update consists of a field path and an SQL
 * expression that will be evaluated against the current row's value. Required: {@code updates}.
 */
public record UpdateTableRequest(
    List<String> id,
    String branch,
    String predicate,
    List<List<String>> updates,
    Map<String, String> properties,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public UpdateTableRequest(
      List<String> id,
      String branch,
      String predicate,
      List<List<String>> updates,
      Map<String, String> properties) {
    this(id, branch, predicate, updates, properties, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link UpdateTableRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String branch;
    private String predicate;
    private List<List<String>> updates;
    private Map<String, String> properties;
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

    public Builder predicate(String value) {
      this.predicate = value;
      return this;
    }

    public Builder updates(List<List<String>> value) {
      this.updates = value;
      return this;
    }

    public Builder properties(Map<String, String> value) {
      this.properties = value;
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

    public UpdateTableRequest build() {
      return new UpdateTableRequest(id, branch, predicate, updates, properties, identity, context);
    }
  }
}
