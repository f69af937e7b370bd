package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code MergeInsertIntoTableRequest}. Request for merging or inserting records into a
 * table, excluding the Arrow IPC stream.
 */
public record MergeInsertIntoTableRequest(
    List<String> id,
    String branch,
    String on,
    Boolean whenMatchedUpdateAll,
    String whenMatchedUpdateAllFilt,
    Boolean whenNotMatchedInsertAll,
    Boolean whenNotMatchedBySourceDelete,
    String whenNotMatchedBySourceDeleteFilt,
    String timeout,
    Boolean useIndex,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public MergeInsertIntoTableRequest(
      List<String> id,
      String branch,
      String on,
      Boolean whenMatchedUpdateAll,
      String whenMatchedUpdateAllFilt,
      Boolean whenNotMatchedInsertAll,
      Boolean whenNotMatchedBySourceDelete,
      String whenNotMatchedBySourceDeleteFilt,
      String timeout,
      Boolean useIndex) {
    this(id,
        branch,
        on,
        whenMatchedUpdateAll,
        whenMatchedUpdateAllFilt,
        whenNotMatchedInsertAll,
        whenNotMatchedBySourceDelete,
        whenNotMatchedBySourceDeleteFilt,
        timeout,
        useIndex,
        null,
        null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link MergeInsertIntoTableRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String branch;
    private String on;
    private Boolean whenMatchedUpdateAll;
    private String whenMatchedUpdateAllFilt;
    private Boolean whenNotMatchedInsertAll;
    private Boolean whenNotMatchedBySourceDelete;
    private String whenNotMatchedBySourceDeleteFilt;
    private String timeout;
    private Boolean useIndex;
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

    public Builder on(String value) {
      this.on = value;
      return this;
    }

    public Builder whenMatchedUpdateAll(Boolean value) {
      this.whenMatchedUpdateAll = value;
      return this;
    }

    public Builder whenMatchedUpdateAllFilt(String value) {
      this.whenMatchedUpdateAllFilt = value;
      return this;
    }

    public Builder whenNotMatchedInsertAll(Boolean value) {
      this.whenNotMatchedInsertAll = value;
      return this;
    }

    public Builder whenNotMatchedBySourceDelete(Boolean value) {
      this.whenNotMatchedBySourceDelete = value;
      return this;
    }

    public Builder whenNotMatchedBySourceDeleteFilt(String value) {
      this.whenNotMatchedBySourceDeleteFilt = value;
      return this;
    }

    public Builder timeout(String value) {
      this.timeout = value;
      return this;
    }

    public Builder useIndex(Boolean value) {
      this.useIndex = value;
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

    public MergeInsertIntoTableRequest build() {
      return new MergeInsertIntoTableRequest(
          id,
          branch,
          on,
          whenMatchedUpdateAll,
          whenMatchedUpdateAllFilt,
          whenNotMatchedInsertAll,
          whenNotMatchedBySourceDelete,
          whenNotMatchedBySourceDeleteFilt,
          timeout,
          useIndex,
          identity,
          context);
    }
  }
}
