package io.lancerest.spark.catalog;

import io.lancerest.spark.connector.Memoized;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.spark.sql.types.StructType;

/**
 * What the catalog knows of materialized views, whose tables it serves like any other: a view
 * table carries {@value #MARKER} in its Arrow schema metadata (the Geneva layout the
 * materialized-view engine writes, and LanceDB's Geneva too), and may start with layout columns
 * ({@code __source_row_id}, {@code __is_set}, {@code __child_index}, and an aggregate view's
 * {@code __agg_…} state) that the engine and LanceDB
 * tooling need on disk but users do not expect from {@code SELECT *}.
 *
 * <p>For a view the catalog therefore hides those columns from the table schema (they stay
 * readable as metadata columns when named), and refuses INSERT / UPDATE / DELETE / MERGE
 * (TRUNCATE Spark refuses itself, as for every table here): only a refresh writes a view, or its
 * content no longer matches its definition and watermark. The engine itself reads and writes
 * view tables by path, not through the catalog.
 */
final class MaterializedViewLayout {
  static final String MARKER = ViewTableLayout.MARKER;
  static final Set<String> LAYOUT_COLUMNS = ViewTableLayout.LAYOUT_COLUMNS;

  private final Supplier<Boolean> view;
  private final Set<String> hidden;

  private MaterializedViewLayout(Supplier<Boolean> view, Set<String> hidden) {
    this.view = view;
    this.hidden = hidden;
  }

  /** Neither a view nor hiding anything (tables being created, staged tables). */
  static final MaterializedViewLayout NONE = new MaterializedViewLayout(() -> false, Set.of());

  /**
   * @param schemaMetadata the table's Arrow schema metadata, read only when needed: at once when
   *     the schema has layout columns, else on the first write (so loading an ordinary table
   *     costs nothing extra)
   */
  static MaterializedViewLayout of(StructType schema,
      Supplier<Map<String, String>> schemaMetadata) {
    Supplier<Boolean> view = Memoized.of(() -> {
      Map<String, String> m = schemaMetadata.get();
      return m != null && m.containsKey(MARKER);
    });
    List<String> names = Arrays.asList(schema.fieldNames());
    Set<String> layout = names.stream().filter(n -> ViewTableLayout.isLayoutColumn(n, names))
        .collect(Collectors.toUnmodifiableSet());
    Set<String> hidden = !layout.isEmpty() && view.get() ? layout : Set.of();
    return new MaterializedViewLayout(view, hidden);
  }

  boolean isView() {
    return view.get();
  }

  /** Columns kept out of the table schema and offered as metadata columns. */
  Set<String> hidden() {
    return hidden;
  }

  /** The refusal of a write to view {@code name}. */
  static UnsupportedCatalogOperationException writeRefused(String name, String what) {
    return new UnsupportedCatalogOperationException("Cannot " + what + " materialized view "
        + name + ": a materialized view is written only by REFRESH MATERIALIZED VIEW, which "
        + "keeps it equal to its definition over the source table. Change the source table and "
        + "refresh the view, or drop the view (DROP MATERIALIZED VIEW)");
  }
}
