package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code DeclareTableRequest}. Request for declaring a table. */
public record DeclareTableRequest(
    List<String> id,
    String location,
    Boolean vendCredentials,
    Map<String, String> properties,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public DeclareTableRequest(
      List<String> id,
      String location,
      Boolean vendCredentials,
      Map<String, String> properties) {
    this(id, location, vendCredentials, properties, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link DeclareTableRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String location;
    private Boolean vendCredentials;
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

    public Builder vendCredentials(Boolean value) {
      this.vendCredentials = value;
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

    public DeclareTableRequest build() {
      return new DeclareTableRequest(id, location, vendCredentials, properties, identity, context);
    }
  }
}
