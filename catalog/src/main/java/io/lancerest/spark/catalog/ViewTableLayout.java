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

  /** The group row count every aggregate view has: what tells an aggregate view's table. */
  public static final String AGGREGATE_ROWS = AGGREGATE_STATE_PREFIX + "rows";

  /**
   * Whether {@code column} of a view table whose columns are {@code columns} is the engine's,
   * not the user's: the {@code __agg_} prefix only in an aggregate view (other views may have
   * user columns named so).
   */
  public static boolean isLayoutColumn(String column, java.util.Collection<String> columns) {
    return LAYOUT_COLUMNS.contains(column) || column.startsWith(AGGREGATE_STATE_PREFIX)
        && columns.contains(AGGREGATE_ROWS);
  }

  private ViewTableLayout() {}
}
