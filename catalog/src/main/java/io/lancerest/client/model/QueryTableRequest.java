package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code QueryTableRequest}. Required: {@code k}, {@code vector}. */
public record QueryTableRequest(
    List<String> id,
    String branch,
    Boolean bypassVectorIndex,
    QueryColumns columns,
    String distanceType,
    Integer ef,
    Boolean fastSearch,
    String filter,
    FullTextQuery fullTextQuery,
    Integer k,
    Float lowerBound,
    Integer nprobes,
    Integer offset,
    Boolean prefilter,
    Integer refineFactor,
    Float upperBound,
    QueryVector vector,
    String vectorColumn,
    Long version,
    Boolean withRowId,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public QueryTableRequest(
      List<String> id,
      String branch,
      Boolean bypassVectorIndex,
      QueryColumns columns,
      String distanceType,
      Integer ef,
      Boolean fastSearch,
      String filter,
      FullTextQuery fullTextQuery,
      Integer k,
      Float lowerBound,
      Integer nprobes,
      Integer offset,
      Boolean prefilter,
      Integer refineFactor,
      Float upperBound,
      QueryVector vector,
      String vectorColumn,
      Long version,
      Boolean withRowId) {
    this(id,
        branch,
        bypassVectorIndex,
        columns,
        distanceType,
        ef,
        fastSearch,
        filter,
        fullTextQuery,
        k,
        lowerBound,
        nprobes,
        offset,
        prefilter,
        refineFactor,
        upperBound,
        vector,
        vectorColumn,
        version,
        withRowId,
        null,
        null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link QueryTableRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String branch;
    private Boolean bypassVectorIndex;
    private QueryColumns columns;
    private String distanceType;
    private Integer ef;
    private Boolean fastSearch;
    private String filter;
    private FullTextQuery fullTextQuery;
    private Integer k;
    private Float lowerBound;
    private Integer nprobes;
    private Integer offset;
    private Boolean prefilter;
    private Integer refineFactor;
    private Float upperBound;
    private QueryVector vector;
    private String vectorColumn;
    private Long version;
    private Boolean withRowId;
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

    public Builder bypassVectorIndex(Boolean value) {
      this.bypassVectorIndex = value;
      return this;
    }

    public Builder columns(QueryColumns value) {
      this.columns = value;
      return this;
    }

    public Builder distanceType(String value) {
      this.distanceType = value;
      return this;
    }

    public Builder ef(Integer value) {
      this.ef = value;
      return this;
    }

    public Builder fastSearch(Boolean value) {
      this.fastSearch = value;
      return this;
    }

    public Builder filter(String value) {
      this.filter = value;
      return this;
    }

    public Builder fullTextQuery(FullTextQuery value) {
      this.fullTextQuery = value;
      return this;
    }

    public Builder k(Integer value) {
      this.k = value;
      return this;
    }

    public Builder lowerBound(Float value) {
      this.lowerBound = value;
      return this;
    }

    public Builder nprobes(Integer value) {
      this.nprobes = value;
      return this;
    }

    public Builder offset(Integer value) {
      this.offset = value;
      return this;
    }

    public Builder prefilter(Boolean value) {
      this.prefilter = value;
      return this;
    }

    public Builder refineFactor(Integer value) {
      this.refineFactor = value;
      return this;
    }

    public Builder upperBound(Float value) {
      this.upperBound = value;
      return this;
    }

    public Builder vector(QueryVector value) {
      this.vector = value;
      return this;
    }

    public Builder vectorColumn(String value) {
      this.vectorColumn = value;
      return this;
    }

    public Builder version(Long value) {
      this.version = value;
      return this;
    }

    public Builder withRowId(Boolean value) {
      this.withRowId = value;
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

    public QueryTableRequest build() {
      return new QueryTableRequest(
          id,
          branch,
          bypassVectorIndex,
          columns,
          distanceType,
          ef,
          fastSearch,
          filter,
          fullTextQuery,
          k,
          lowerBound,
          nprobes,
          offset,
          prefilter,
          refineFactor,
          upperBound,
          vector,
          vectorColumn,
          version,
          withRowId,
          identity,
          context);
    }
  }
}
