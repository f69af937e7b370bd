package io.lancerest.spark.mv.sql;

import io.lancerest.spark.catalog.MaterializedViewTable;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.ResolvedIdentifier;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * A check of every analyzed statement: lance-spark's column backfills ({@code ALTER TABLE ...
 * ADD COLUMNS / UPDATE COLUMNS ... FROM}) are refused on a materialized view. The view's columns
 * are its definition's; a column written into it would be dropped or contradicted by the next
 * refresh, and the view would no longer equal its SELECT.
 */
public final class ViewWriteGuard extends AbstractFunction1<LogicalPlan, BoxedUnit> {
  /** lance-spark 0.4.0's backfill commands, by class name (its extension may be absent). */
  private static final java.util.Set<String> BACKFILLS = java.util.Set.of(
      "org.apache.spark.sql.catalyst.plans.logical.AddColumnsBackfill",
      "org.apache.spark.sql.catalyst.plans.logical.UpdateColumnsBackfill");

  @Override
  public BoxedUnit apply(LogicalPlan plan) {
    if (BACKFILLS.contains(plan.getClass().getName())) {
      // the first child is the target table (a resolved identifier), the second the rows
      LogicalPlan target = plan.children().head();
      String name = null;
      org.apache.spark.sql.connector.catalog.Table table = null;
      if (target instanceof ResolvedIdentifier id
          && id.catalog() instanceof TableCatalog catalog) {
        name = id.catalog().name() + "." + id.identifier();
        try {
          table = catalog.loadTable(id.identifier());
        } catch (NoSuchTableException e) {
          return BoxedUnit.UNIT; // lance-spark says so in its own words
        }
      } else if (target instanceof DataSourceV2Relation rel) {
        table = rel.table();
        name = table.name();
      }
      if (table instanceof MaterializedViewTable t && t.isMaterializedView()) {
        throw new InvalidViewDefinitionException("Table " + name + " is a materialized view: "
            + "its columns come from its definition, and a backfilled column would not survive"
            + " its next refresh. Add the column to the view's SELECT instead (DROP "
            + "MATERIALIZED VIEW, then CREATE MATERIALIZED VIEW)");
      }
    }
    return BoxedUnit.UNIT;
  }
}
