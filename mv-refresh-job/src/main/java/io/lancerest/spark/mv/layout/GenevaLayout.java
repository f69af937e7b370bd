package io.lancerest.spark.mv.layout;

import io.lancerest.client.Identifiers;
import io.lancerest.client.model.MaterializedViewUdtfEntry;
import io.lancerest.spark.catalog.ViewTableLayout;
import io.lancerest.spark.mv.definition.DefinitionJson;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.definition.ViewState;
import io.lancerest.spark.mv.error.EnvelopeChecksumException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and writes a view definition as Arrow schema metadata on the view table, in the layout
 * LanceDB's Geneva uses ({@code geneva::view::*}, watermark on {@code __source_row_id}), plus
 * {@code lancerest::view::*} keys for what Geneva's layout has no place for (checksum, the rest
 * of {@code udtf_spec}, the last job). Used in client-managed mode, where the server has no
 * materialized-view endpoints and the table itself is the only place to keep the definition.
 */
public final class GenevaLayout {
  public static final String QUERY = "geneva::view::query";
  public static final String BASE_TABLE = "geneva::view::base_table";
  public static final String BASE_TABLE_DB_URI = "geneva::view::base_table_db_uri";
  public static final String BASE_TABLE_VERSION = "geneva::view::base_table_version";
  public static final String VERSION = ViewTableLayout.MARKER;
  public static final String UDTF = "geneva::view::udtf";
  public static final String CHUNKER = "geneva::view::chunker";
  public static final String MANIFEST = "geneva::view::manifest";
  public static final String MANIFEST_CHECKSUM = "geneva::view::manifest_checksum";
  public static final String NAMESPACE_PATH = "geneva::view::namespace_path";
  /** Field metadata on {@link #SOURCE_ROW_ID}. */
  public static final String WATERMARK = "geneva::mv::last_refreshed_version";

  public static final String FORMAT = "lancerest::view::format";
  public static final String UDTF_SHA = "lancerest::view::udtf_sha";
  public static final String UDTF_SPEC = "lancerest::view::udtf_spec";
  public static final String AUTO_REFRESH = "lancerest::view::auto_refresh";
  /**
   * Set to {@code service} on the views a materialized-view service created: clients in
   * {@code mv.mode = auto} send their refreshes to the server, the service refreshes them.
   */
  public static final String MANAGED_BY = "lancerest::view::managed_by";
  public static final String LAST_JOB = "lancerest::view::last_job";
  /** Transaction properties of a refresh's view commit: its job id and the view's kind. */
  public static final String JOB_ID = "lancerest::view::job_id";
  public static final String KIND = "lancerest::view::kind";
  public static final String FORMAT_VERSION = "1";

  public static final String SOURCE_ROW_ID = ViewTableLayout.SOURCE_ROW_ID;
  public static final String IS_SET = ViewTableLayout.IS_SET;
  public static final String CHILD_INDEX = ViewTableLayout.CHILD_INDEX;
  /** Geneva joins namespace parts with '$' in {@code namespace_path}. */
  public static final String PATH_SEPARATOR = "$";

  private GenevaLayout() {}

  /** Schema metadata plus per-field metadata (field name → entries). */
  public record Metadata(Map<String, String> schema, Map<String, Map<String, String>> fields) {
    public Metadata {
      schema = Map.copyOf(schema);
      fields = Map.copyOf(fields);
    }
  }

  /** A definition and its refresh state, as read from a view table. */
  public record StoredView(ViewDefinition definition, ViewState state) {}

  /** True when the schema metadata marks a materialized view (Geneva's or ours). */
  public static boolean isMaterializedView(Map<String, String> schemaMetadata) {
    return schemaMetadata != null && schemaMetadata.containsKey(VERSION);
  }

  /**
   * The metadata of a view table. Schema-level keys with a {@code null} value in the result's
   * source (e.g. no watermark yet) are left out. {@code sourceUri} is the REST server the source
   * lives on, or {@code null}.
   */
  public static Metadata encode(ViewDefinition d, ViewState state, String sourceUri) {
    Map<String, String> m = new LinkedHashMap<>();
    SourceQuery q = d.sourceQuery();
    m.put(VERSION, d.kind().genevaVersion());
    m.put(QUERY, q.toJson());
    m.put(BASE_TABLE, q.sourceTableName());
    List<String> ns = q.sourceTableId().subList(0, q.sourceTableId().size() - 1);
    m.put(NAMESPACE_PATH, String.join(PATH_SEPARATOR, ns));
    putIfNotNull(m, BASE_TABLE_DB_URI, sourceUri);
    putIfNotNull(m, BASE_TABLE_VERSION, state.baseTableVersion());
    m.put(FORMAT, FORMAT_VERSION);
    m.put(AUTO_REFRESH, Boolean.toString(d.autoRefresh()));
    putIfNotNull(m, LAST_JOB, state.lastJob());
    if (d.function() != null) {
      MaterializedViewUdtfEntry wire = d.function().toWire();
      m.put(d.kind() == MaterializedViewKind.UDTF ? UDTF : CHUNKER, wire.getUdtf());
      m.put(UDTF_SHA, wire.getUdtfSha());
      // Everything else of udtf_spec; the envelope itself is under the Geneva key.
      m.put(UDTF_SPEC, DefinitionJson.write(withoutEnvelope(wire)));
      putIfNotNull(m, MANIFEST, wire.getManifest());
      putIfNotNull(m, MANIFEST_CHECKSUM, wire.getManifestChecksum());
    }
    Map<String, Map<String, String>> fields = new LinkedHashMap<>();
    if (d.kind().incremental() && state.watermark() != null) {
      fields.put(SOURCE_ROW_ID, Map.of(WATERMARK, Long.toString(state.watermark())));
    }
    return new Metadata(m, fields);
  }

  /**
   * Reads a definition back. Verifies the envelope checksum and language.
   *
   * @throws InvalidViewDefinitionException not a view, or a definition this engine cannot read
   *     (including a Geneva view with a Python function, named as such)
   */
  public static StoredView decode(List<String> viewId, Metadata md) {
    Map<String, String> m = md.schema();
    if (!isMaterializedView(m)) {
      throw new InvalidViewDefinitionException("Table " + Identifiers.display(viewId)
          + " is not a materialized view (no '" + VERSION + "' schema metadata)");
    }
    MaterializedViewKind kind = MaterializedViewKind.fromGenevaVersion(m.get(VERSION));
    FunctionSpec function = null;
    if (kind != MaterializedViewKind.QUERY) {
      String envelope = m.get(UDTF) != null ? m.get(UDTF) : m.get(CHUNKER);
      String sha = m.get(UDTF_SHA);
      if (sha == null) {
        // Not written by this engine (Geneva): say which language it is before anything else.
        FunctionEnvelope.fromJson(decodeBase64(viewId, envelope));
        throw new EnvelopeChecksumException("View " + Identifiers.display(viewId)
            + " has no '" + UDTF_SHA + "'; its function envelope cannot be verified");
      }
      FunctionEnvelope env = FunctionEnvelope.decode(envelope, sha);
      MaterializedViewUdtfEntry rest = m.get(UDTF_SPEC) != null
          ? DefinitionJson.read(m.get(UDTF_SPEC), MaterializedViewUdtfEntry.class, UDTF_SPEC)
          : FunctionSpec.of(kind, env).toWire();
      MaterializedViewUdtfEntry e = new MaterializedViewUdtfEntry()
          .kind(MaterializedViewUdtfEntry.KindEnum.fromValue(kind.wire())).udtf(envelope)
          .udtfSha(sha).udtfName(rest.getUdtfName()).udtfVersion(rest.getUdtfVersion())
          .inputColumns(rest.getInputColumns()).partitionBy(rest.getPartitionBy())
          .partitionByIndexedColumn(rest.getPartitionByIndexedColumn())
          .numCpus(rest.getNumCpus()).numGpus(rest.getNumGpus()).memory(rest.getMemory())
          .errorHandling(rest.getErrorHandling()).batch(rest.getBatch())
          .manifest(m.get(MANIFEST)).manifestChecksum(m.get(MANIFEST_CHECKSUM));
      function = FunctionSpec.fromWire(kind, e);
    }
    SourceQuery q = SourceQuery.fromJson(m.get(QUERY));
    ViewDefinition d = new ViewDefinition(viewId, kind, q, function,
        Boolean.parseBoolean(m.getOrDefault(AUTO_REFRESH, "false")));
    Map<String, String> sid = md.fields().getOrDefault(SOURCE_ROW_ID, Map.of());
    ViewState state = new ViewState(parseLong(viewId, WATERMARK, sid.get(WATERMARK)),
        parseLong(viewId, BASE_TABLE_VERSION, m.get(BASE_TABLE_VERSION)), m.get(LAST_JOB));
    return new StoredView(d, state);
  }

  private static MaterializedViewUdtfEntry withoutEnvelope(MaterializedViewUdtfEntry w) {
    return new MaterializedViewUdtfEntry().kind(w.getKind()).udtfName(w.getUdtfName())
        .udtfVersion(w.getUdtfVersion()).inputColumns(w.getInputColumns())
        .partitionBy(w.getPartitionBy()).partitionByIndexedColumn(w.getPartitionByIndexedColumn())
        .numCpus(w.getNumCpus()).numGpus(w.getNumGpus()).memory(w.getMemory())
        .errorHandling(w.getErrorHandling()).batch(w.getBatch());
  }

  private static byte[] decodeBase64(List<String> viewId, String envelope) {
    if (envelope == null) {
      throw new InvalidViewDefinitionException("View " + Identifiers.display(viewId)
          + " is a function view but has neither '" + UDTF + "' nor '" + CHUNKER + "'");
    }
    try {
      return Base64.getDecoder().decode(envelope.trim());
    } catch (IllegalArgumentException e) {
      return envelope.getBytes(StandardCharsets.UTF_8);
    }
  }

  private static Long parseLong(List<String> viewId, String key, String v) {
    if (v == null || v.isBlank()) {
      return null;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new InvalidViewDefinitionException("View " + Identifiers.display(viewId) + ": '"
          + key + "' is '" + v + "', not a version number");
    }
  }

  private static void putIfNotNull(Map<String, String> m, String k, Object v) {
    if (v != null) {
      m.put(k, v.toString());
    }
  }

  /**
   * The {@link #LAST_JOB} value: JSON with {@code job_id}, {@code status}, {@code kind}, {@code
   * source_version}, {@code rows_inserted}, {@code rows_deleted}, {@code finished_at_ms}. Written
   * by {@code ViewCommit} in the refresh's own commit, so it never describes a change the view
   * does not have.
   */
  public static String lastJobJson(String jobId, String status, MaterializedViewKind kind,
      long sourceVersion, long rowsInserted, long rowsDeleted, long finishedAtMs) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("job_id", jobId);
    m.put("status", status);
    m.put("kind", kind.wire());
    m.put("source_version", sourceVersion);
    m.put("rows_inserted", rowsInserted);
    m.put("rows_deleted", rowsDeleted);
    m.put("finished_at_ms", finishedAtMs);
    return DefinitionJson.write(m);
  }

  /** Splits a Geneva {@code namespace_path}. */
  public static List<String> namespacePath(String value) {
    return value == null || value.isEmpty() ? List.of()
        : Arrays.asList(value.split(java.util.regex.Pattern.quote(PATH_SEPARATOR), -1));
  }
}
