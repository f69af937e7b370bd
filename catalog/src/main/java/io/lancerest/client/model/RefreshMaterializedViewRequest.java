package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code RefreshMaterializedViewRequest}. */
public record RefreshMaterializedViewRequest(
    List<String> id,
    Integer srcVersion,
    Integer maxRowsPerFragment,
    Integer concurrency,
    Integer intraApplierConcurrency,
    Integer sourceTaskSize,
    String cluster,
    Integer outputLimit,
    String manifest,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public RefreshMaterializedViewRequest(
      List<String> id,
      Integer srcVersion,
      Integer maxRowsPerFragment,
      Integer concurrency,
      Integer intraApplierConcurrency,
      Integer sourceTaskSize,
      String cluster,
      Integer outputLimit,
      String manifest) {
    this(id,
        srcVersion,
        maxRowsPerFragment,
        concurrency,
        intraApplierConcurrency,
        sourceTaskSize,
        cluster,
        outputLimit,
        manifest,
        null,
        null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link RefreshMaterializedViewRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private Integer srcVersion;
    private Integer maxRowsPerFragment;
    private Integer concurrency;
    private Integer intraApplierConcurrency;
    private Integer sourceTaskSize;
    private String cluster;
    private Integer outputLimit;
    private String manifest;
    private Identity identity;
    private Map<String, String> context;

    private Builder() {}

    public Builder id(List<String> value) {
      this.id = value;
      return this;
    }

    public Builder srcVersion(Integer value) {
      this.srcVersion = value;
      return this;
    }

    public Builder maxRowsPerFragment(Integer value) {
      this.maxRowsPerFragment = value;
      return this;
    }

    public Builder concurrency(Integer value) {
      this.concurrency = value;
      return this;
    }

    public Builder intraApplierConcurrency(Integer value) {
      this.intraApplierConcurrency = value;
      return this;
    }

    public Builder sourceTaskSize(Integer value) {
      this.sourceTaskSize = value;
      return this;
    }

    public Builder cluster(String value) {
      this.cluster = value;
      return this;
    }

    public Builder outputLimit(Integer value) {
      this.outputLimit = value;
      return this;
    }

    public Builder manifest(String value) {
      this.manifest = value;
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

    public RefreshMaterializedViewRequest build() {
      return new RefreshMaterializedViewRequest(
          id,
          srcVersion,
          maxRowsPerFragment,
          concurrency,
          intraApplierConcurrency,
          sourceTaskSize,
          cluster,
          outputLimit,
          manifest,
          identity,
          context);
    }
  }
}
