package io.lancerest.spark.search;

import io.lancerest.spark.connector.search.SearchException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.lance.spark.LanceDataset;
import scala.collection.JavaConverters;

/**
 * The Lance table a search function names, loaded through the session's catalog as a query of
 * it would be (its read options, vended credentials and namespace connection).
 *
 * @param name the table's full name, {@code catalog.namespace.table}
 * @param table the catalog's table
 */
record SearchTarget(String name, LanceDataset table) {

  /** Resolves {@code tableName} as SQL resolves a table name in {@code session}. */
  static SearchTarget resolve(SparkSession session, String function, String tableName) {
    List<String> parts;
    try {
      parts = new ArrayList<>(JavaConverters.seqAsJavaList(
          session.sessionState().sqlParser().parseMultipartIdentifier(tableName)));
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      throw new SearchException(function + ": '" + tableName + "' is not a table name; name "
          + "the table as catalog.namespace.table, e.g. lance.ns.items.");
    }
    // a temporary view shadows catalog tables of its name, as in a query; it has no Lance
    // dataset of its own to search
    if (session.sessionState().catalog().isTempView(JavaConverters.asScalaBuffer(parts)
        .toSeq())) {
      throw new SearchException(function + ": " + tableName + " is a temporary view; the "
          + "search functions take a table or materialized view of the Lance catalog. Search "
          + "the Lance table the view reads, e.g. " + function + "('lance.ns.items', ...).");
    }
    CatalogManager catalogs = session.sessionState().catalogManager();
    CatalogPlugin catalog;
    if (parts.size() > 1 && catalogs.isCatalogRegistered(parts.get(0))) {
      catalog = catalogs.catalog(parts.remove(0));
    } else {
      catalog = catalogs.currentCatalog();
      if (parts.size() == 1) {
        parts.addAll(0, Arrays.asList(catalogs.currentNamespace()));
      }
    }
    String name = catalog.name() + "." + String.join(".", parts);
    if (!(catalog instanceof TableCatalog tables)) {
      throw new SearchException(function + ": catalog " + catalog.name() + " of " + tableName
          + " holds no tables; name a table of the Lance catalog, e.g. lance.ns.items.");
    }
    Identifier id = Identifier.of(parts.subList(0, parts.size() - 1).toArray(String[]::new),
        parts.get(parts.size() - 1));
    Table t;
    try {
      t = tables.loadTable(id);
    } catch (NoSuchTableException e) {
      throw new SearchException(function + ": table " + name + " does not exist.");
    }
    if (!(t instanceof LanceDataset lance)) {
      throw new SearchException(function + ": " + name + " is not a Lance table; search a "
          + "table of the Lance catalog (spark.sql.catalog.<name> = "
          + "io.lancerest.spark.catalog.LanceRestCatalog).");
    }
    return new SearchTarget(name, lance);
  }
}
