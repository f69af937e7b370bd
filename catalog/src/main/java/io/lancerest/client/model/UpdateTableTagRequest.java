package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code UpdateTableTagRequest}. Required: {@code tag}, {@code version}. */
public record UpdateTableTagRequest(
    List<String> id,
    String tag,
    Long version,
    String branch,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public UpdateTableTagRequest(List<String> id, String tag, Long version, String branch) {
    this(id, tag, version, branch, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link UpdateTableTagRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String tag;
    private Long version;
    private String branch;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
      return this;
    }

    public Builder tag(String value) {
      this.tag = value;
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

    public Builder identity(Identity value) {
      this.identity = value;
      return this;
    }

    public Builder context(Map<String, String> value) {
      this.context = value;
      return this;
    }

    public UpdateTableTagRequest build() {
      return new UpdateTableTagRequest(id, tag, version, branch, identity, context);
    }
  }
}
