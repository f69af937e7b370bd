package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code RegisterTableRequest}. Required: {@code location}. */
public record RegisterTableRequest(
    List<String> id,
    String location,
    String mode,
    Map<String, String> properties,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public RegisterTableRequest(
      List<String> id,
      String location,
      String mode,
      Map<String, String> properties) {
    this(id, location, mode, properties, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link RegisterTableRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String location;
    private String mode;
    private Map<String, String> properties;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
      return this;
    }

    public Builder location(String value) {
      this.location = value;
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

    public Builder identity(Identity value) {
      this.identity = value;
      return this;
    }

    public Builder context(Map<String, String> value) {
      this.context = value;
      return this;
    }

    public RegisterTableRequest build() {
      return new RegisterTableRequest(id, location, mode, properties, identity, context);
    }
  }
}
