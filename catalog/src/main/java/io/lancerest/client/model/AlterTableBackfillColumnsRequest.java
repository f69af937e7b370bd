package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code AlterTableBackfillColumnsRequest}. Required: {@code column}. */
public record AlterTableBackfillColumnsRequest(
    List<String> id,
    String branch,
    String column,
    String where,
    Integer concurrency,
    Integer intraApplierConcurrency,
    Integer minCheckpointSize,
    Integer maxCheckpointSize,
    Double batchCheckpointFlushIntervalSeconds,
    Integer readVersion,
    Integer taskSize,
    Integer numFrags,
    Integer checkpointSize,
    Integer commitGranularity,
    String cluster,
    String manifest,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public AlterTableBackfillColumnsRequest(
      List<String> id,
      String branch,
      String column,
      String where,
      Integer concurrency,
      Integer intraApplierConcurrency,
      Integer minCheckpointSize,
      Integer maxCheckpointSize,
      Double batchCheckpointFlushIntervalSeconds,
      Integer readVersion,
      Integer taskSize,
      Integer numFrags,
      Integer checkpointSize,
      Integer commitGranularity,
      String cluster,
      String manifest) {
    this(id,
        branch,
        column,
        where,
        concurrency,
        intraApplierConcurrency,
        minCheckpointSize,
        maxCheckpointSize,
        batchCheckpointFlushIntervalSeconds,
        readVersion,
        taskSize,
        numFrags,
        checkpointSize,
        commitGranularity,
        cluster,
        manifest,
        null,
        null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link AlterTableBackfillColumnsRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String branch;
    private String column;
    private String where;
    private Integer concurrency;
    private Integer intraApplierConcurrency;
    private Integer minCheckpointSize;
    private Integer maxCheckpointSize;
    private Double batchCheckpointFlushIntervalSeconds;
    private Integer readVersion;
    private Integer taskSize;
    private Integer numFrags;
    private Integer checkpointSize;
    private Integer commitGranularity;
    private String cluster;
    private String manifest;
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

    public Builder column(String value) {
      this.column = value;
      return this;
    }

    public Builder where(String value) {
      this.where = value;
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

    public Builder minCheckpointSize(Integer value) {
      this.minCheckpointSize = value;
      return this;
    }

    public Builder maxCheckpointSize(Integer value) {
      this.maxCheckpointSize = value;
      return this;
    }

    public Builder batchCheckpointFlushIntervalSeconds(Double value) {
      this.batchCheckpointFlushIntervalSeconds = value;
      return this;
    }

    public Builder readVersion(Integer value) {
      this.readVersion = value;
      return this;
    }

    public Builder taskSize(Integer value) {
      this.taskSize = value;
      return this;
    }

    public Builder numFrags(Integer value) {
      this.numFrags = value;
      return this;
    }

    public Builder checkpointSize(Integer value) {
      this.checkpointSize = value;
      return this;
    }

    public Builder commitGranularity(Integer value) {
      this.commitGranularity = value;
      return this;
    }

    public Builder cluster(String value) {
      this.cluster = value;
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

    public AlterTableBackfillColumnsRequest build() {
      return new AlterTableBackfillColumnsRequest(
          id,
          branch,
          column,
          where,
          concurrency,
          intraApplierConcurrency,
          minCheckpointSize,
          maxCheckpointSize,
          batchCheckpointFlushIntervalSeconds,
          readVersion,
          taskSize,
          numFrags,
          checkpointSize,
          commitGranularity,
          cluster,
          manifest,
          identity,
          context);
    }
  }
}
