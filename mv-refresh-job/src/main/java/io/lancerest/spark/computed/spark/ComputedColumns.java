package io.lancerest.spark.computed.spark;

import io.lancerest.spark.computed.Backfill;
import io.lancerest.spark.computed.BackfillOptions;
import io.lancerest.spark.computed.BackfillResult;
import io.lancerest.spark.computed.ColumnAdd;
import io.lancerest.spark.computed.ComputedColumn;
import io.lancerest.spark.computed.ComputedColumnSpec;
import io.lancerest.spark.mv.engine.CatalogBinding;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import scala.collection.JavaConverters;

/**
 * The Java API of computed columns on catalog tables ({@code cat.ns.table}, or a name relative
 * to the session's current catalog and namespace). The table is found as the view engine finds
 * a view's sources: one DescribeTable through the catalog's client, with vended credentials.
 */
public final class ComputedColumns {
  private ComputedColumns() {}

  /**
   * Adds a computed column: every check first, then one commit of the all-NULL column whose
   * field metadata holds the definition. Nothing is computed.
   */
  public static ComputedColumn add(SparkSession spark, String table, ComputedColumnSpec spec) {
    return add(spark, Target.resolve(spark, table), spec);
  }

  /** {@link #add(SparkSession, String, ComputedColumnSpec)} of a name already split in parts. */
  public static ComputedColumn add(SparkSession spark, List<String> table,
      ComputedColumnSpec spec) {
    return add(spark, Target.resolve(spark, table), spec);
  }

  private static ComputedColumn add(SparkSession spark, Target t, ComputedColumnSpec spec) {
    ComputedColumn def = ColumnAdd.add(t.display(), t.location().dataset(), spec);
    t.binding().invalidate(t.location().relativeId());
    return def;
  }

  /** Fills {@code column} as {@link BackfillOptions} ({@code options}) say. */
  public static BackfillResult backfill(SparkSession spark, String table, String column,
      Map<String, String> options) {
    return backfill(spark, Target.resolve(spark, table), column, options);
  }

  /** {@link #backfill(SparkSession, String, String, Map)} of a name already split in parts. */
  public static BackfillResult backfill(SparkSession spark, List<String> table, String column,
      Map<String, String> options) {
    return backfill(spark, Target.resolve(spark, table), column, options);
  }

  private static BackfillResult backfill(SparkSession spark, Target t, String column,
      Map<String, String> options) {
    BackfillOptions o = BackfillOptions.parse(t.display(), column, options);
    return backfill(spark, t, column, o);
  }

  static BackfillResult backfill(SparkSession spark, Target t, String column, BackfillOptions o) {
    try {
      return Backfill.run(t.display(), t.location().dataset(), column, o,
          schema -> SparkRowCondition.compile(spark, t.display(), column, o.where(), schema),
          new SparkFragmentRunner(spark));
    } finally {
      t.binding().invalidate(t.location().relativeId());
    }
  }

  /** A catalog table resolved once for a statement. */
  record Target(String display, CatalogBinding binding, CatalogBinding.TableLocation location) {
    static Target resolve(SparkSession spark, String table) {
      List<String> parts;
      try {
        parts = JavaConverters.seqAsJavaList(spark.sessionState().sqlParser()
            .parseMultipartIdentifier(table));
      } catch (Exception e) {
        throw new io.lancerest.spark.computed.ComputedColumnException("'" + table + "' is not "
            + "a table name: write catalog.namespace.table.", e);
      }
      return resolve(spark, parts);
    }

    static Target resolve(SparkSession spark, List<String> name) {
      CatalogManager cm = spark.sessionState().catalogManager();
      String catalog;
      List<String> id = new ArrayList<>();
      if (name.size() >= 2 && cm.isCatalogRegistered(name.get(0))) {
        catalog = name.get(0);
        id.addAll(name.subList(1, name.size()));
      } else {
        catalog = cm.currentCatalog().name();
        if (name.size() == 1) {
          id.addAll(List.of(cm.currentNamespace()));
        }
        id.addAll(name);
      }
      CatalogBinding b = CatalogBinding.of(spark, catalog);
      CatalogBinding.TableLocation loc = b.locate(id, "table");
      if (loc.managedVersioning()) {
        // the engine commits to the table in storage itself (column files, checkpoint)
        throw new io.lancerest.spark.computed.ComputedColumnException("Table " + b.display(id)
            + " has its versions managed by the namespace server (managed_versioning=true); "
            + "computed columns are committed to the table in storage, which would change it "
            + "behind the server's back. Nothing was changed. Keep the table in a namespace "
            + "whose server does not manage table versions.");
      }
      return new Target(b.display(id), b, loc);
    }
  }
}
