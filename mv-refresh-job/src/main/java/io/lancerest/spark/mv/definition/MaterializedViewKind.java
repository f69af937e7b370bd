package io.lancerest.spark.mv.definition;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.Locale;

/** The three kinds of the spec's {@code CreateMaterializedViewRequest.kind}. */
public enum MaterializedViewKind {
  /** Projection + filter over one source table; 1:1 rows; incremental refresh. */
  QUERY("query", "2", true),
  /** Batch table function over the whole source or per partition; N:M rows; full rebuild. */
  UDTF("udtf", "udtf", false),
  /** One function call per source row (or batch of rows); 1:N rows; incremental refresh. */
  CHUNKER("chunker", "chunker", true);

  private final String wire;
  private final String genevaVersion;
  private final boolean incremental;

  MaterializedViewKind(String wire, String genevaVersion, boolean incremental) {
    this.wire = wire;
    this.genevaVersion = genevaVersion;
    this.incremental = incremental;
  }

  /** The spec's value ({@code query}, {@code udtf}, {@code chunker}). */
  public String wire() {
    return wire;
  }

  /** The value of {@code geneva::view::version} for views of this kind. */
  public String genevaVersion() {
    return genevaVersion;
  }

  /** Incremental kinds key view rows by the source's stable row id. */
  public boolean incremental() {
    return incremental;
  }

  /** Reads a kind; {@code scalar_udtf} is the legacy name of {@code chunker}. */
  public static MaterializedViewKind fromWire(String value) {
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "query" -> QUERY;
      case "udtf" -> UDTF;
      case "chunker", "scalar_udtf" -> CHUNKER;
      default -> throw new InvalidViewDefinitionException("Unknown materialized view kind '"
          + value + "'; expected query, udtf or chunker (scalar_udtf is read as chunker)");
    };
  }

  /** Reads {@code geneva::view::version}: "2" (and "1") for query views, else the kind name. */
  public static MaterializedViewKind fromGenevaVersion(String value) {
    if ("1".equals(value) || "2".equals(value)) {
      return QUERY;
    }
    return fromWire(value);
  }
}
