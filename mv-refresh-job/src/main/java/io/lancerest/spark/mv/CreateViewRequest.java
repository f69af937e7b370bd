package io.lancerest.spark.mv;

import io.lancerest.client.Identifiers;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.List;
import java.util.Map;

/**
 * A request to create a view, from SQL or Java. Give either {@code selectSql} (a Spark SELECT
 * over one source table, turned into a {@link SourceQuery} by the engine) or {@code
 * sourceQuery}, which the engine analyzes as the SELECT it stands for: both are checked alike.
 *
 * @param viewId the view's identifier relative to the catalog
 * @param kind query, udtf or chunker
 * @param functionClass udtf/chunker: the Java class of the function
 * @param options udtf_spec fields and function options ({@code OPTIONS (...)})
 * @param tableProperties properties of the view table ({@code TBLPROPERTIES (...)})
 * @param withData populate the view right away (SQL default {@code WITH DATA})
 */
public record CreateViewRequest(List<String> viewId, boolean ifNotExists,
    MaterializedViewKind kind, String selectSql, SourceQuery sourceQuery, String functionClass,
    String partitionBy, String partitionByIndexedColumn, Map<String, String> options,
    Map<String, String> tableProperties, boolean withData) {
  public CreateViewRequest {
    viewId = List.copyOf(viewId);
    options = options == null ? Map.of() : Map.copyOf(options);
    tableProperties = tableProperties == null ? Map.of() : Map.copyOf(tableProperties);
    if ((selectSql == null) == (sourceQuery == null)) {
      throw new InvalidViewDefinitionException("Give exactly one of selectSql and sourceQuery "
          + "for view " + Identifiers.display(viewId));
    }
    if ((kind == MaterializedViewKind.QUERY) != (functionClass == null)) {
      throw new InvalidViewDefinitionException(kind == MaterializedViewKind.QUERY
          ? "A query view has no function class; use USING CHUNKER/UDTF for a function view"
          : "A " + kind.wire() + " view needs a function class (USING "
              + kind.wire().toUpperCase(java.util.Locale.ROOT) + " '<class>')");
    }
  }
}
