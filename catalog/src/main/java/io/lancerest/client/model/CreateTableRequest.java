package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code CreateTableRequest}. Request for creating a table, excluding the Arrow IPC
 * stream.
 */
public record CreateTableRequest(
    List<String> id,
    String mode,
    Map<String, String> properties,
    Map<String, String> storageOptions,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public CreateTableRequest(
      List<String> id,
      String mode,
      Map<String, String> properties,
      Map<String, String> storageOptions) {
    this(id, mode, properties, storageOptions, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link CreateTableRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String mode;
    private Map<String, String> properties;
    private Map<String, String> storageOptions;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
      return this;
    }

    public Builder mode(String value) {
      this.mode = value;
      return this;
    }

    public Builder properties(Map<String, String> value) {
      this.properties = value;
      return this;
    }

    public Builder storageOptions(Map<String, String> value) {
      this.storageOptions = value;
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

    public CreateTableRequest build() {
      return new CreateTableRequest(id, mode, properties, storageOptions, identity, context);
    }
  }
}
