package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code CreateMaterializedViewRequest}. Required: {@code kind}, {@code sourceQuery},
 * {@code outputSchema}.
 */
public record CreateMaterializedViewRequest(
    List<String> id,
    String kind,
    String sourceQuery,
    String outputSchema,
    MaterializedViewUdtfEntry udtfSpec,
    Boolean withNoData,
    Boolean autoRefresh,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public CreateMaterializedViewRequest(
      List<String> id,
      String kind,
      String sourceQuery,
      String outputSchema,
      MaterializedViewUdtfEntry udtfSpec,
      Boolean withNoData,
      Boolean autoRefresh) {
    this(id, kind, sourceQuery, outputSchema, udtfSpec, withNoData, autoRefresh, null, null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link CreateMaterializedViewRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String kind;
    private String sourceQuery;
    private String outputSchema;
    private MaterializedViewUdtfEntry udtfSpec;
    private Boolean withNoData;
    private Boolean autoRefresh;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
      return this;
    }

    public Builder kind(String value) {
      this.kind = value;
      return this;
    }

    public Builder sourceQuery(String value) {
      this.sourceQuery = value;
      return this;
    }

    public Builder outputSchema(String value) {
      this.outputSchema = value;
      return this;
    }

    public Builder udtfSpec(MaterializedViewUdtfEntry value) {
      this.udtfSpec = value;
      return this;
    }

    public Builder withNoData(Boolean value) {
      this.withNoData = value;
      return this;
    }

    public Builder autoRefresh(Boolean value) {
      this.autoRefresh = value;
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

    public CreateMaterializedViewRequest build() {
      return new CreateMaterializedViewRequest(
          id,
          kind,
          sourceQuery,
          outputSchema,
          udtfSpec,
          withNoData,
          autoRefresh,
          identity,
          context);
    }
  }
}
