package io.lancerest.spark.mv.engine;

import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.spark.catalog.CatalogOptions;
import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.refresh.RefreshCaches;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.TableCatalog;

/**
 * One Spark catalog as the engine sees it: the {@link LanceRestCatalog} instance (views are
 * created and dropped through it, so they are ordinary tables to Spark), its own REST client
 * (for DescribeTable and the materialized-view endpoints) and its options. The client belongs to
 * the catalog, which closes it; the engine never opens one of its own. Identifiers handed in are
 * catalog-relative; the catalog's {@code parent} prefix is added for the server.
 */
public final class CatalogBinding {
  private final String name;
  private final LanceRestCatalog catalog;
  private final CatalogOptions options;
  private final LanceRestClient client;
  private final RefreshCaches caches;

  CatalogBinding(String name, LanceRestCatalog catalog, CatalogOptions options,
      LanceRestClient client, RefreshCaches caches) {
    this.name = name;
    this.catalog = catalog;
    this.options = options;
    this.client = client;
    this.caches = caches;
  }

  /** The binding of catalog {@code name} in {@code spark}. */
  public static CatalogBinding of(SparkSession spark, String name) {
    CatalogPlugin plugin;
    try {
      plugin = spark.sessionState().catalogManager().catalog(name);
    } catch (Exception e) { // Spark's CatalogNotFoundException is a checked SparkException
      throw new MaterializedViewException("Catalog '" + name + "' is not configured: set "
          + "spark.sql.catalog." + name + " = " + LanceRestCatalog.class.getName() + " and "
          + "its uri", e);
    }
    if (!(plugin instanceof LanceRestCatalog lance)) {
      throw new MaterializedViewException("Catalog '" + name + "' is a " + plugin.getClass()
          .getName() + "; materialized views need a " + LanceRestCatalog.class.getName()
          + ": set spark.sql.catalog." + name + " to it, or name a catalog that is one");
    }
    return of(lance);
  }

  /** The binding of an initialized catalog; it uses the catalog's own client and options. */
  public static CatalogBinding of(LanceRestCatalog catalog) {
    return new CatalogBinding(catalog.name(), catalog, catalog.catalogOptions(),
        catalog.client(), catalog.resource(RefreshCaches.class, RefreshCaches::new));
  }

  /** What refreshes of this catalog's views keep for the next one; closed with the catalog. */
  public RefreshCaches caches() {
    return caches;
  }

  public String name() {
    return name;
  }

  public TableCatalog catalog() {
    return catalog;
  }

  public LanceRestClient client() {
    return client;
  }

  public CatalogOptions options() {
    return options;
  }

  /** The server-side identifier of a catalog-relative one. */
  public List<String> serverId(List<String> relative) {
    List<String> id = new ArrayList<>(options.parent());
    id.addAll(relative);
    return id;
  }

  /** The catalog-relative identifier of a server-side one (the parent prefix removed). */
  public List<String> relativeId(List<String> serverId) {
    List<String> p = options.parent();
    if (serverId.size() > p.size() && serverId.subList(0, p.size()).equals(p)) {
      return List.copyOf(serverId.subList(p.size(), serverId.size()));
    }
    return List.copyOf(serverId);
  }

  /** Spark's identifier for a catalog-relative id. */
  public static Identifier ident(List<String> relative) {
    return Identifier.of(relative.subList(0, relative.size() - 1).toArray(String[]::new),
        relative.get(relative.size() - 1));
  }

  /** {@code catalog.ns.name}, as users write it. */
  public String display(List<String> relative) {
    List<String> parts = new ArrayList<>();
    parts.add(name);
    parts.addAll(relative);
    return Identifiers.display(parts);
  }

  /**
   * A table as one DescribeTable (with vended credentials) found it: its data's location with
   * the storage options and credential provider that open it, resolved once for the statement.
   *
   * @param properties the table's properties as the server keeps them (empty when it keeps
   *     none: the catalog then keeps them in the dataset's config)
   */
  public record TableLocation(List<String> relativeId, LanceLocation dataset,
      boolean managedVersioning, Map<String, String> properties) {
    public String location() {
      return dataset.uri();
    }

    public Map<String, String> storageOptions() {
      return dataset.storageOptions();
    }

    @Override
    public String toString() {
      return "TableLocation{" + relativeId + " at " + dataset + "}";
    }
  }

  /**
   * Describes a table. {@code what} ("view", "source table") names it in the not-found error.
   *
   * @throws MaterializedViewNotFoundException the server does not know it
   */
  public TableLocation locate(List<String> relative, String what) {
    DescribeTableResponse d;
    try {
      d = client.describeTable(new DescribeTableRequest().id(serverId(relative))
          .vendCredentials(true));
    } catch (NotFoundException e) {
      throw new MaterializedViewNotFoundException(what.substring(0, 1).toUpperCase(
          java.util.Locale.ROOT) + what.substring(1) + " " + display(relative)
          + " does not exist", e);
    }
    if (d.getLocation() == null || d.getLocation().isBlank()) {
      throw new MaterializedViewException("The server described " + what + " "
          + display(relative) + " without a location; its data cannot be read");
    }
    // With the route that renews expiring vended credentials (driver and tasks).
    Map<String, String> storage = catalog.engineStorageOptions(serverId(relative),
        d.getStorageOptions());
    return new TableLocation(List.copyOf(relative), LanceLocation.of(d.getLocation(), storage),
        Boolean.TRUE.equals(d.getManagedVersioning()),
        d.getProperties() == null ? Map.of()
            : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(d.getProperties())));
  }

  /** Invalidates Spark's cached table (after the engine changed it behind Spark's back). */
  public void invalidate(List<String> relative) {
    catalog.invalidateTable(ident(relative));
  }
}
