package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code CreateTableBranchRequest}. Required: {@code name}. */
public record CreateTableBranchRequest(
    List<String> id,
    String name,
    String fromBranch,
    Long fromVersion,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public CreateTableBranchRequest(
      List<String> id,
      String name,
      String fromBranch,
      Long fromVersion) {
    this(id, name, fromBranch, fromVersion, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link CreateTableBranchRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String name;
    private String fromBranch;
    private Long fromVersion;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
      return this;
    }

    public Builder name(String value) {
      this.name = value;
      return this;
    }

    public Builder fromBranch(String value) {
      this.fromBranch = value;
      return this;
    }

    public Builder fromVersion(Long value) {
      this.fromVersion = value;
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

    public CreateTableBranchRequest build() {
      return new CreateTableBranchRequest(id, name, fromBranch, fromVersion, identity, context);
    }
  }
}
