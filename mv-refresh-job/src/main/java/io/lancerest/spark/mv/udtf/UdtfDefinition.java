package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.function.BatchUdtf;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What the UDTF engine needs from a view's definition: the function (the framework's {@link
 * FunctionEnvelope}), how the source is partitioned, the framework's {@link ErrorHandling}
 * applied per partition, and resources.
 *
 * @param function class, name, version, output schema, input columns and options
 * @param partitionBy {@code partition_by} column, or {@code null}
 * @param partitionByIndexedColumn {@code partition_by_indexed_column}, or {@code null}
 */
public record UdtfDefinition(FunctionEnvelope function, String partitionBy,
    String partitionByIndexedColumn, ErrorHandling errorHandling, UdtfResources resources) {

  public UdtfDefinition {
    Objects.requireNonNull(function, "function");
    if (function.batch()) {
      throw new InvalidViewDefinitionException(
          "'batch' is a chunker option; a UDTF always receives whole partitions");
    }
    if (partitionBy != null && partitionByIndexedColumn != null) {
      throw new InvalidViewDefinitionException("UDTF '" + function.name() + "': partition_by "
          + "and partition_by_indexed_column are exclusive; give one of them");
    }
    errorHandling = errorHandling == null ? ErrorHandling.FAIL : errorHandling;
    resources = resources == null ? UdtfResources.NONE : resources;
  }

  /** The definition of a stored view's verified function spec. */
  public static UdtfDefinition of(FunctionSpec spec) {
    if (spec.kind() != MaterializedViewKind.UDTF) {
      throw new InvalidViewDefinitionException("Not a UDTF function spec: kind "
          + spec.kind().wire());
    }
    return new UdtfDefinition(spec.envelope(), spec.partitionBy(),
        spec.partitionByIndexedColumn(), spec.errorHandling(), UdtfResources.of(spec));
  }

  /** A definition with defaults for everything optional (tests, Java callers). */
  public static UdtfDefinition of(String name, String version, Class<? extends BatchUdtf> udtf,
      Schema outputSchema) {
    return new UdtfDefinition(FunctionEnvelope.java(udtf.getName(), name, version,
        outputSchema, null, false, Map.of()), null, null, null, null);
  }

  public String name() {
    return function.name();
  }

  public String version() {
    return function.version();
  }

  public String className() {
    return function.className();
  }

  public Schema outputSchema() {
    return function.outputSchema();
  }

  /** Input columns; {@code null} for every column of the source query. */
  public List<String> inputColumns() {
    return function.inputColumns();
  }

  public Map<String, String> options() {
    return function.options();
  }

  /** SHA-256 of the envelope: part of the resume key. */
  public String udtfSha() {
    return function.sha256Hex();
  }

  private FunctionEnvelope envelope(List<String> inputs, Map<String, String> opts) {
    return FunctionEnvelope.java(className(), name(), version(), outputSchema(), inputs, false,
        opts);
  }

  public UdtfDefinition withInputColumns(List<String> columns) {
    return new UdtfDefinition(envelope(columns, options()), partitionBy,
        partitionByIndexedColumn, errorHandling, resources);
  }

  public UdtfDefinition withOptions(Map<String, String> newOptions) {
    return new UdtfDefinition(envelope(inputColumns(), newOptions), partitionBy,
        partitionByIndexedColumn, errorHandling, resources);
  }

  public UdtfDefinition withPartitionBy(String column) {
    return new UdtfDefinition(function, column, null, errorHandling, resources);
  }

  public UdtfDefinition withPartitionByIndexedColumn(String column) {
    return new UdtfDefinition(function, null, column, errorHandling, resources);
  }

  public UdtfDefinition withErrorHandling(ErrorHandling handling) {
    return new UdtfDefinition(function, partitionBy, partitionByIndexedColumn, handling,
        resources);
  }

  public UdtfDefinition withResources(UdtfResources newResources) {
    return new UdtfDefinition(function, partitionBy, partitionByIndexedColumn, errorHandling,
        newResources);
  }

  /** The key column rows are grouped by, or {@code null} for one call over everything. */
  String keyColumn() {
    if (partitionByIndexedColumn != null) {
      return IvfPartitions.PARTITION_ID;
    }
    return partitionBy;
  }
}
