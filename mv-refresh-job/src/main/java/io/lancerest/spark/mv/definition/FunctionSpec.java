package io.lancerest.spark.mv.definition;

import io.lancerest.client.LanceJson;
import io.lancerest.client.model.MaterializedViewUdtfEntry;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.List;
import java.util.Objects;

/**
 * The function of a {@code udtf} or {@code chunker} view: the spec's {@code
 * MaterializedViewUdtfEntry} with its envelope decoded and verified.
 *
 * @param kind {@code UDTF} or {@code CHUNKER}
 * @param envelope the decoded function envelope
 * @param partitionBy batch UDTF: one call per distinct value of this source column
 * @param partitionByIndexedColumn batch UDTF: one call per IVF partition of this column's index
 * @param numCpus per-worker CPU request, advisory where unsupported
 * @param numGpus per-worker GPU request
 * @param memory per-worker memory request in bytes (64-bit: 2 GiB and more are valid)
 * @param errorHandling failure policy; {@link ErrorHandling#FAIL} when absent
 * @param manifest Geneva environment manifest, stored and passed through untouched
 * @param manifestChecksum its checksum, passed through untouched
 */
public record FunctionSpec(MaterializedViewKind kind, FunctionEnvelope envelope,
    String partitionBy, String partitionByIndexedColumn, Double numCpus, Double numGpus,
    Long memory, ErrorHandling errorHandling, String manifest, String manifestChecksum) {

  public FunctionSpec {
    Objects.requireNonNull(envelope, "envelope");
    if (kind != MaterializedViewKind.UDTF && kind != MaterializedViewKind.CHUNKER) {
      throw new InvalidViewDefinitionException("udtf_spec is only valid for udtf and chunker "
          + "views, not for kind '" + (kind == null ? null : kind.wire()) + "'");
    }
    if (partitionBy != null && partitionByIndexedColumn != null) {
      throw new InvalidViewDefinitionException("PARTITION BY and PARTITION BY INDEXED are "
          + "exclusive (partition_by = '" + partitionBy + "', partition_by_indexed_column = '"
          + partitionByIndexedColumn + "'); give one of them");
    }
    if (kind == MaterializedViewKind.CHUNKER
        && (partitionBy != null || partitionByIndexedColumn != null)) {
      throw new InvalidViewDefinitionException(
          "PARTITION BY is for UDTF views; a chunker runs once per source row");
    }
    if (kind == MaterializedViewKind.UDTF && envelope.batch()) {
      throw new InvalidViewDefinitionException(
          "'batch' is a chunker option; a UDTF always receives whole partitions");
    }
    for (Double d : new Double[] {numCpus, numGpus}) {
      if (d != null && d < 0) {
        throw new InvalidViewDefinitionException("num_cpus and num_gpus must be >= 0");
      }
    }
    if (memory != null && memory < 0) {
      throw new InvalidViewDefinitionException("memory must be >= 0 bytes, got " + memory);
    }
    errorHandling = errorHandling == null ? ErrorHandling.FAIL : errorHandling;
  }

  public static FunctionSpec of(MaterializedViewKind kind, FunctionEnvelope envelope) {
    return new FunctionSpec(kind, envelope, null, null, null, null, null, null, null, null);
  }

  /** The wire entry: envelope base64 + SHA-256, name and version, and the other fields. */
  public MaterializedViewUdtfEntry toWire() {
    return new MaterializedViewUdtfEntry(kind.wire(), envelope.toBase64(), envelope.sha256Hex(),
        envelope.name(), envelope.version(), envelope.inputColumns(), partitionBy,
        partitionByIndexedColumn, numCpus, numGpus, memory,
        errorHandling == ErrorHandling.FAIL ? null
            : LanceJson.mapper().valueToTree(errorHandling),
        kind == MaterializedViewKind.CHUNKER ? envelope.batch() : null, manifest,
        manifestChecksum);
  }

  /**
   * Reads and verifies a wire entry for a view of {@code viewKind}: kinds agree, the SHA-256
   * matches, the language is java, and name/version/input_columns/batch agree with the envelope.
   */
  public static FunctionSpec fromWire(MaterializedViewKind viewKind, MaterializedViewUdtfEntry e) {
    if (e == null) {
      throw new InvalidViewDefinitionException("A " + viewKind.wire() + " view needs udtf_spec");
    }
    MaterializedViewKind k = MaterializedViewKind.fromWire(e.kind());
    if (k != viewKind) {
      throw new InvalidViewDefinitionException("udtf_spec.kind '" + e.kind()
          + "' does not match the view kind '" + viewKind.wire() + "'");
    }
    FunctionEnvelope env = FunctionEnvelope.decode(e.udtf(), e.udtfSha());
    agree("udtf_name", e.udtfName(), env.name());
    agree("udtf_version", e.udtfVersion(), env.version());
    if (e.inputColumns() != null) {
      agree("input_columns", e.inputColumns(), env.inputColumns());
    }
    if (e.batch() != null) {
      agree("batch", e.batch(), env.batch());
    }
    return new FunctionSpec(k, env, e.partitionBy(), e.partitionByIndexedColumn(), e.numCpus(),
        e.numGpus(), e.memory(), ErrorHandling.fromWire(e.errorHandling()), e.manifest(),
        e.manifestChecksum());
  }

  private static void agree(String field, Object wire, Object envelope) {
    if (!Objects.equals(wire, envelope)) {
      throw new InvalidViewDefinitionException("udtf_spec." + field + " is " + wire
          + " but the envelope says " + envelope + "; they must agree");
    }
  }

  /** Input columns the function reads ({@code null}: all). */
  public List<String> inputColumns() {
    return envelope.inputColumns();
  }
}
