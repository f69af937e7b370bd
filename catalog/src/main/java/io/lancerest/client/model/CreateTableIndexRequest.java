package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code CreateTableIndexRequest}. Required: {@code column}, {@code indexType}. */
public record CreateTableIndexRequest(
    List<String> id,
    String branch,
    String column,
    String indexType,
    String name,
    String distanceType,
    Integer numPartitions,
    Integer numSubVectors,
    Integer numBits,
    Integer sampleRate,
    Integer maxIterations,
    Integer targetPartitionSize,
    Integer m,
    Integer efConstruction,
    Boolean withPosition,
    String baseTokenizer,
    String language,
    Integer maxTokenLength,
    Boolean lowerCase,
    Boolean stem,
    Boolean removeStopWords,
    Boolean asciiFolding,
    Identity identity,
    Map<String, String> context) implements LanceRequest {
  public CreateTableIndexRequest(
      List<String> id,
      String branch,
      String column,
      String indexType,
      String name,
      String distanceType,
      Integer numPartitions,
      Integer numSubVectors,
      Integer numBits,
      Integer sampleRate,
      Integer maxIterations,
      Integer targetPartitionSize,
      Integer m,
      Integer efConstruction,
      Boolean withPosition,
      String baseTokenizer,
      String language,
      Integer maxTokenLength,
      Boolean lowerCase,
      Boolean stem,
      Boolean removeStopWords,
      Boolean asciiFolding) {
    this(id,
        branch,
        column,
        indexType,
        name,
        distanceType,
        numPartitions,
        numSubVectors,
        numBits,
        sampleRate,
        maxIterations,
        targetPartitionSize,
        m,
        efConstruction,
        withPosition,
        baseTokenizer,
        language,
        maxTokenLength,
        lowerCase,
        stem,
        removeStopWords,
        asciiFolding,
        null,
        null);
  }

  public static Builder builder(List<String> id) {
    return new Builder().id(id);
  }

  /** Builder for {@link CreateTableIndexRequest}; unset fields are left out of the request. */
  public static final class Builder {
    private List<String> id;
    private String branch;
    private String column;
    private String indexType;
    private String name;
    private String distanceType;
    private Integer numPartitions;
    private Integer numSubVectors;
    private Integer numBits;
    private Integer sampleRate;
    private Integer maxIterations;
    private Integer targetPartitionSize;
    private Integer m;
    private Integer efConstruction;
    private Boolean withPosition;
    private String baseTokenizer;
    private String language;
    private Integer maxTokenLength;
    private Boolean lowerCase;
    private Boolean stem;
    private Boolean removeStopWords;
    private Boolean asciiFolding;
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

    public Builder indexType(String value) {
      this.indexType = value;
      return this;
    }

    public Builder name(String value) {
      this.name = value;
      return this;
    }

    public Builder distanceType(String value) {
      this.distanceType = value;
      return this;
    }

    public Builder numPartitions(Integer value) {
      this.numPartitions = value;
      return this;
    }

    public Builder numSubVectors(Integer value) {
      this.numSubVectors = value;
      return this;
    }

    public Builder numBits(Integer value) {
      this.numBits = value;
      return this;
    }

    public Builder sampleRate(Integer value) {
      this.sampleRate = value;
      return this;
    }

    public Builder maxIterations(Integer value) {
      this.maxIterations = value;
      return this;
    }

    public Builder targetPartitionSize(Integer value) {
      this.targetPartitionSize = value;
      return this;
    }

    public Builder m(Integer value) {
      this.m = value;
      return this;
    }

    public Builder efConstruction(Integer value) {
      this.efConstruction = value;
      return this;
    }

    public Builder withPosition(Boolean value) {
      this.withPosition = value;
      return this;
    }

    public Builder baseTokenizer(String value) {
      this.baseTokenizer = value;
      return this;
    }

    public Builder language(String value) {
      this.language = value;
      return this;
    }

    public Builder maxTokenLength(Integer value) {
      this.maxTokenLength = value;
      return this;
    }

    public Builder lowerCase(Boolean value) {
      this.lowerCase = value;
      return this;
    }

    public Builder stem(Boolean value) {
      this.stem = value;
      return this;
    }

    public Builder removeStopWords(Boolean value) {
      this.removeStopWords = value;
      return this;
    }

    public Builder asciiFolding(Boolean value) {
      this.asciiFolding = value;
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

    public CreateTableIndexRequest build() {
      return new CreateTableIndexRequest(
          id,
          branch,
          column,
          indexType,
          name,
          distanceType,
          numPartitions,
          numSubVectors,
          numBits,
          sampleRate,
          maxIterations,
          targetPartitionSize,
          m,
          efConstruction,
          withPosition,
          baseTokenizer,
          language,
          maxTokenLength,
          lowerCase,
          stem,
          removeStopWords,
          asciiFolding,
          identity,
          context);
    }
  }
}
