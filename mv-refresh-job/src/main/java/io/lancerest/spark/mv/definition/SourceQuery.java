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
 * @param aggregation the grouping of an aggregate view, or {@code null} for a view 1:1 with the
 *     filtered source rows. An aggregate view is written in format {@value #FORMAT_V2}, so that a
 *     reader that knows only {@value #FORMAT} refuses it instead of reading its projection as
 *     per-row expressions
 */
public record SourceQuery(String format, String dialect, List<String> sourceTableId,
    List<String> sourceNamespace, List<OutputColumn> projection, String filter, Long limit,
    Aggregation aggregation) {
  public static final String FORMAT = "lancerest.source_query.v1";
  /** The format of aggregate views: {@value #FORMAT} with {@code aggregation}. */
  public static final String FORMAT_V2 = "lancerest.source_query.v2";
  public static final String DIALECT = "spark-sql";

  /** One output column: {@code expr} is a Spark SQL expression; a plain column is its name. */
  public record OutputColumn(String name, String expr) {}

  public SourceQuery {
    format = format == null ? (aggregation == null ? FORMAT : FORMAT_V2) : format;
    dialect = dialect == null ? DIALECT : dialect;
    if (!FORMAT.equals(format) && !FORMAT_V2.equals(format)) {
      throw new InvalidViewDefinitionException("source_query has format '" + format
          + "'; this engine reads '" + FORMAT + "' and '" + FORMAT_V2 + "'. The view was "
          + "defined by another client; upgrade this one or re-create the view");
    }
    if (FORMAT_V2.equals(format) != (aggregation != null)) {
      throw new InvalidViewDefinitionException("source_query of format '" + format + "' "
          + (aggregation == null ? "has no aggregation; format " + FORMAT_V2 + " is for "
          + "aggregate views" : "has an aggregation, which needs format " + FORMAT_V2));
    }
    if (aggregation != null && (projection == null || projection.isEmpty())) {
      throw new InvalidViewDefinitionException("source_query of an aggregate view needs its "
          + "projection: the SELECT's columns, keys and aggregates, in order");
    }
    if (aggregation != null && limit != null) {
      throw new InvalidViewDefinitionException("source_query of an aggregate view cannot have "
          + "a limit");
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

  /** A query without grouping, in format {@value #FORMAT}, as clients before v2 wrote it. */
  public SourceQuery(String format, String dialect, List<String> sourceTableId,
      List<String> sourceNamespace, List<OutputColumn> projection, String filter, Long limit) {
    this(format, dialect, sourceTableId, sourceNamespace, projection, filter, limit, null);
  }

  public static SourceQuery of(List<String> sourceTableId, List<String> sourceNamespace,
      List<OutputColumn> projection, String filter, Long limit) {
    return new SourceQuery(FORMAT, DIALECT, sourceTableId, sourceNamespace, projection, filter,
        limit, null);
  }

  /** An aggregate view's query, in format {@value #FORMAT_V2}. */
  public static SourceQuery grouped(List<String> sourceTableId, List<String> sourceNamespace,
      List<OutputColumn> projection, String filter, Aggregation aggregation) {
    return new SourceQuery(FORMAT_V2, DIALECT, sourceTableId, sourceNamespace, projection,
        filter, null, aggregation);
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
