package io.lancerest.spark.catalog;

/** A table of this catalog that can tell whether it holds a materialized view. */
public interface MaterializedViewTable {
  /** Whether the table carries the materialized-view layout (read once, when first asked). */
  boolean isMaterializedView();
}
