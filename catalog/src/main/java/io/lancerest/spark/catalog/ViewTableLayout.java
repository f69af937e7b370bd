package io.lancerest.spark.catalog;

import java.util.Set;

/**
 * The names that make a Lance table a materialized view on disk (LanceDB Geneva's layout, which
 * the view engine writes): the catalog needs them to serve view tables, the engine to write
 * them. Defined once, here, since the engine depends on the catalog.
 */
public final class ViewTableLayout {
  /** Arrow schema metadata key present on every view table. */
  public static final String MARKER = "geneva::view::version";
  public static final String SOURCE_ROW_ID = "__source_row_id";
  public static final String IS_SET = "__is_set";
  public static final String CHILD_INDEX = "__child_index";
  /** Columns a view table has for the engine, not for {@code SELECT *}. */
  public static final Set<String> LAYOUT_COLUMNS = Set.of(SOURCE_ROW_ID, IS_SET, CHILD_INDEX);
  /**
   * Prefix of the columns an aggregate view keeps its per-group state in (row counts, non-NULL
   * counts, running sums, keys and aggregates only HAVING uses): engine columns too.
   */
  public static final String AGGREGATE_STATE_PREFIX = "__agg_";

  /** Whether {@code column} of a view table is the engine's, not the user's. */
  public static boolean isLayoutColumn(String column) {
    return LAYOUT_COLUMNS.contains(column) || column.startsWith(AGGREGATE_STATE_PREFIX);
  }

  private ViewTableLayout() {}
}
