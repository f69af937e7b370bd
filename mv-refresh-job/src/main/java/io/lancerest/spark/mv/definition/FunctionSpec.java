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
    return new MaterializedViewUdtfEntry()
        .kind(MaterializedViewUdtfEntry.KindEnum.fromValue(kind.wire()))
        .udtf(envelope.toBase64()).udtfSha(envelope.sha256Hex())
        .udtfName(envelope.name()).udtfVersion(envelope.version())
        .inputColumns(envelope.inputColumns())
        .partitionBy(partitionBy).partitionByIndexedColumn(partitionByIndexedColumn)
        .numCpus(numCpus).numGpus(numGpus).memory(memory)
        .errorHandling(errorHandling == ErrorHandling.FAIL ? null
            : LanceJson.mapper().valueToTree(errorHandling))
        .batch(kind == MaterializedViewKind.CHUNKER ? envelope.batch() : null)
        .manifest(manifest).manifestChecksum(manifestChecksum);
  }

  /**
   * Reads and verifies a wire entry for a view of {@code viewKind}: kinds agree, the SHA-256
   * matches, the language is java, and name/version/input_columns/batch agree with the envelope.
   */
  public static FunctionSpec fromWire(MaterializedViewKind viewKind, MaterializedViewUdtfEntry e) {
    if (e == null) {
      throw new InvalidViewDefinitionException("A " + viewKind.wire() + " view needs udtf_spec");
    }
    MaterializedViewKind k =
        MaterializedViewKind.fromWire(e.getKind() == null ? null : e.getKind().getValue());
    if (k != viewKind) {
      throw new InvalidViewDefinitionException("udtf_spec.kind '" + e.getKind()
          + "' does not match the view kind '" + viewKind.wire() + "'");
    }
    FunctionEnvelope env = FunctionEnvelope.decode(e.getUdtf(), e.getUdtfSha());
    agree("udtf_name", e.getUdtfName(), env.name());
    agree("udtf_version", e.getUdtfVersion(), env.version());
    if (e.getInputColumns() != null) {
      agree("input_columns", e.getInputColumns(), env.inputColumns());
    }
    if (e.getBatch() != null) {
      agree("batch", e.getBatch(), env.batch());
    }
    return new FunctionSpec(k, env, e.getPartitionBy(), e.getPartitionByIndexedColumn(),
        e.getNumCpus(), e.getNumGpus(), e.getMemory(),
        ErrorHandling.fromWire(e.getErrorHandling()), e.getManifest(), e.getManifestChecksum());
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
