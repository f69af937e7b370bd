package io.lancerest.spark.mv.definition;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code source_query} of a view: the JSON any client can read to know what a view computes.
 * The server stores it without interpreting it (spec), so its format is ours; it is documented in
 * {@code docs/materialized-views.md} and versioned by {@link #format}.
 *
 * @param format always {@value #FORMAT}; readers refuse other values
 * @param dialect the language of {@code expr} and {@code filter}: {@value #DIALECT}
 * @param sourceTableId the source table's identifier on the REST server (namespace parts + name)
 * @param sourceNamespace the source's namespace relative to the Spark catalog it was named in
 *     (what a user writes between the catalog name and the table name)
 * @param projection output columns in order: name and expression over the source columns
 * @param filter a boolean expression over the source columns, or {@code null}
 * @param limit the maximum number of source rows the view takes, or {@code null}
 */
public record SourceQuery(String format, String dialect, List<String> sourceTableId,
    List<String> sourceNamespace, List<OutputColumn> projection, String filter, Long limit) {
  public static final String FORMAT = "lancerest.source_query.v1";
  public static final String DIALECT = "spark-sql";

  /** One output column: {@code expr} is a Spark SQL expression; a plain column is its name. */
  public record OutputColumn(String name, String expr) {}

  public SourceQuery {
    format = format == null ? FORMAT : format;
    dialect = dialect == null ? DIALECT : dialect;
    if (!FORMAT.equals(format)) {
      throw new InvalidViewDefinitionException("source_query has format '" + format
          + "'; this engine reads '" + FORMAT + "'. The view was defined by another client; "
          + "upgrade this one or re-create the view");
    }
    if (!DIALECT.equals(dialect)) {
      throw new InvalidViewDefinitionException("source_query is written in dialect '" + dialect
          + "'; this engine reads '" + DIALECT + "'");
    }
    if (sourceTableId == null || sourceTableId.isEmpty()) {
      throw new InvalidViewDefinitionException("source_query has no source_table_id");
    }
    sourceTableId = List.copyOf(sourceTableId);
    sourceNamespace = sourceNamespace == null
        ? List.copyOf(sourceTableId.subList(0, sourceTableId.size() - 1))
        : List.copyOf(sourceNamespace);
    projection = projection == null ? List.of() : List.copyOf(projection);
    Set<String> seen = new HashSet<>();
    for (OutputColumn c : projection) {
      if (c == null || c.name() == null || c.name().isBlank() || c.expr() == null
          || c.expr().isBlank()) {
        throw new InvalidViewDefinitionException(
            "source_query projection entries need a non-empty name and expr, got " + c);
      }
      if (!seen.add(c.name().toLowerCase(java.util.Locale.ROOT))) {
        throw new InvalidViewDefinitionException("source_query projection has two columns named '"
            + c.name() + "'; give one of them an alias");
      }
    }
    if (filter != null && filter.isBlank()) {
      filter = null;
    }
    if (limit != null && limit < 0) {
      throw new InvalidViewDefinitionException("source_query limit must be >= 0, got " + limit);
    }
  }

  public static SourceQuery of(List<String> sourceTableId, List<String> sourceNamespace,
      List<OutputColumn> projection, String filter, Long limit) {
    return new SourceQuery(FORMAT, DIALECT, sourceTableId, sourceNamespace, projection, filter,
        limit);
  }

  /** The source table's name (last part of the identifier). */
  public String sourceTableName() {
    return sourceTableId.get(sourceTableId.size() - 1);
  }

  public String toJson() {
    return DefinitionJson.write(this);
  }

  public static SourceQuery fromJson(String json) {
    if (json == null || json.isBlank()) {
      throw new InvalidViewDefinitionException("source_query is empty");
    }
    if (!json.contains("\"format\"")) {
      throw new InvalidViewDefinitionException("source_query has no 'format' field, so it was "
          + "not written by this engine (Geneva's query format is not read): " + abbreviate(json));
    }
    return DefinitionJson.read(json, SourceQuery.class, "source_query");
  }

  private static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "…";
  }
}
