package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code CreateTableVersionRequest}. Request to create a new table version entry.
 * Required: {@code version}, {@code manifestPath}.
 */
public record CreateTableVersionRequest(
    List<String> id,
    Long version,
    String branch,
    String manifestPath,
    Long manifestSize,
    String eTag,
    Map<String, String> metadata,
    String namingScheme,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public CreateTableVersionRequest(
      List<String> id,
      Long version,
      String branch,
      String manifestPath,
      Long manifestSize,
      String eTag,
      Map<String, String> metadata,
      String namingScheme) {
    this(id, version, branch, manifestPath, manifestSize, eTag, metadata, namingScheme, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link CreateTableVersionRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private Long version;
    private String branch;
    private String manifestPath;
    private Long manifestSize;
    private String eTag;
    private Map<String, String> metadata;
    private String namingScheme;
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

    public Builder manifestPath(String value) {
      this.manifestPath = value;
      return this;
    }

    public Builder manifestSize(Long value) {
      this.manifestSize = value;
      return this;
    }

    public Builder eTag(String value) {
      this.eTag = value;
      return this;
    }

    public Builder metadata(Map<String, String> value) {
      this.metadata = value;
      return this;
    }

    public Builder namingScheme(String value) {
      this.namingScheme = value;
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

    public CreateTableVersionRequest build() {
      return new CreateTableVersionRequest(
          id,
          version,
          branch,
          manifestPath,
          manifestSize,
          eTag,
          metadata,
          namingScheme,
          identity,
          context);
    }
  }
}
