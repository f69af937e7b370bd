package io.lancerest.spark.mv.sql;

import io.lancerest.client.Identifiers;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.lance.spark.LanceDataset;
import scala.collection.JavaConverters;

/**
 * A table named in a statement that opens its Lance dataset itself (CREATE INDEX with one of our
 * methods, SHOW INDEXES), as lance-spark's own statements open it: from the read options of the
 * catalog's table, loaded afresh (so with newly vended credentials, and through the namespace
 * for tables with managed versioning). Any catalog whose tables are lance-spark's {@code
 * LanceDataset} will do.
 *
 * @param display the name as users write it, catalog first
 */
record CatalogLanceTable(String display, String catalogName, Identifier ident) {

  /** {@code name} as written, resolved against the session's current catalog and namespace. */
  static CatalogLanceTable resolve(SparkSession spark, List<String> name) {
    MaterializedViewStatements.Resolved r = MaterializedViewStatements.resolveObject(spark, name);
    List<String> full = new ArrayList<>();
    full.add(r.catalog());
    full.addAll(r.id());
    return new CatalogLanceTable(Identifiers.display(full), r.catalog(), Identifier.of(
        r.id().subList(0, r.id().size() - 1).toArray(String[]::new),
        r.id().get(r.id().size() - 1)));
  }

  /**
   * The catalog's table, loaded afresh (so with credentials vended now, not cached ones); {@link
   * #invalidate} it after a change to its dataset.
   *
   * @param what the statement and its object, which the errors start with
   * @param lanceOnly why the table must be a Lance one ("vector indexes are built on Lance
   *     datasets only")
   * @throws NoSuchTableException the catalog has no such table (its message names it, catalog
   *     first, as Spark's analyzer does)
   */
  LanceDataset load(SparkSession spark, String what, String lanceOnly)
      throws NoSuchTableException {
    TableCatalog catalog = catalog(spark, what);
    catalog.invalidateTable(ident);
    Table loaded;
    try {
      loaded = catalog.loadTable(ident);
    } catch (NoSuchTableException e) {
      List<String> parts = new ArrayList<>();
      parts.add(catalogName);
      parts.addAll(List.of(ident.namespace()));
      parts.add(ident.name());
      throw new NoSuchTableException(JavaConverters.asScalaBuffer(parts).toSeq());
    }
    if (!(loaded instanceof LanceDataset lance)) {
      throw new MaterializedViewException(what + ": table " + display + " is not a Lance table ("
          + loaded.getClass().getName() + "); " + lanceOnly);
    }
    return lance;
  }

  /** Drops the catalog's cached table, so that the next statement reads the new version. */
  void invalidate(SparkSession spark) {
    CatalogPlugin plugin = spark.sessionState().catalogManager().catalog(catalogName);
    if (plugin instanceof TableCatalog catalog) {
      catalog.invalidateTable(ident);
    }
  }

  private TableCatalog catalog(SparkSession spark, String what) {
    CatalogPlugin plugin = spark.sessionState().catalogManager().catalog(catalogName);
    if (!(plugin instanceof TableCatalog catalog)) {
      throw new MaterializedViewException(what + ": catalog '" + catalogName + "' has no "
          + "tables (it is a " + plugin.getClass().getName() + "); name a Lance table");
    }
    return catalog;
  }
}
