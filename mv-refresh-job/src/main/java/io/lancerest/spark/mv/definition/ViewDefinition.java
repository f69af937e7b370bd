package io.lancerest.spark.mv.definition;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.List;
import java.util.Objects;

/**
 * What a materialized view computes; independent of where it is stored (the server's
 * CreateMaterializedView, or the Geneva layout on the view table in client-managed mode).
 *
 * @param viewId the view's identifier on the REST server
 * @param kind query, udtf or chunker
 * @param sourceQuery source table, projection, filter and limit
 * @param function the function of udtf/chunker views; {@code null} for query views
 * @param autoRefresh the spec's {@code auto_refresh} opt-in (server-managed only)
 */
public record ViewDefinition(List<String> viewId, MaterializedViewKind kind,
    SourceQuery sourceQuery, FunctionSpec function, boolean autoRefresh) {

  public ViewDefinition {
    viewId = List.copyOf(Objects.requireNonNull(viewId, "viewId"));
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(sourceQuery, "sourceQuery");
    if (kind == MaterializedViewKind.QUERY && function != null) {
      throw new InvalidViewDefinitionException("View " + display(viewId) + " is a query view "
          + "and cannot have a udtf_spec; use USING CHUNKER or USING UDTF for a function view");
    }
    if (kind != MaterializedViewKind.QUERY && function == null) {
      throw new InvalidViewDefinitionException("View " + display(viewId) + " of kind '"
          + kind.wire() + "' needs a function (udtf_spec)");
    }
    if (function != null && function.kind() != kind) {
      throw new InvalidViewDefinitionException("View " + display(viewId) + " has kind '"
          + kind.wire() + "' but its function is a " + function.kind().wire());
    }
  }

  static String display(List<String> id) {
    return io.lancerest.client.Identifiers.display(id);
  }
}
