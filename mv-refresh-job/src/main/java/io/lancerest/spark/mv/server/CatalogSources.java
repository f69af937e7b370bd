package io.lancerest.spark.mv.server;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.definition.ViewState;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.result.ViewDescription;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;

/**
 * What auto refresh reads of the upstream, as the service (its own credentials): namespace and
 * table listings through the catalog's client, views through the engine of catalog {@code
 * catalog} of {@code spark}.
 */
final class CatalogSources implements AutoRefresh.Sources, ViewDiscovery.Catalog {
  private final SparkSession spark;
  private final String catalog;
  private final MaterializedViews views;

  CatalogSources(SparkSession spark, String catalog, MaterializedViews views) {
    this.spark = spark;
    this.catalog = catalog;
    this.views = views;
  }

  @Override
  public List<String> childNamespaces(List<String> namespace) {
    return client().listAllNamespaces(namespace).toList();
  }

  @Override
  public List<String> tables(List<String> namespace) {
    return client().listAllTables(namespace).toList();
  }

  @Override
  public ViewDiscovery.Kind kind(List<String> tableId) {
    ViewDescription d;
    try {
      SparkSession.setActiveSession(spark);
      d = views.describe(tableId);
    } catch (InvalidViewDefinitionException notAView) {
      return ViewDiscovery.Kind.PLAIN; // a table, or a view this engine cannot read
    }
    if (d == null || d.definition() == null) {
      return ViewDiscovery.Kind.PLAIN;
    }
    return d.definition().autoRefresh() ? ViewDiscovery.Kind.AUTO_VIEW
        : ViewDiscovery.Kind.VIEW;
  }

  /**
   * The view as auto refresh needs it; not wanted when the name is now a plain table or a view
   * whose definition this engine cannot decode (it would fail every poll).
   */
  @Override
  public AutoRefresh.Watched watched(List<String> viewId) {
    SparkSession.setActiveSession(spark);
    ViewDescription d;
    try {
      d = views.describe(viewId);
    } catch (InvalidViewDefinitionException notAView) {
      d = null;
    }
    if (d == null || d.definition() == null) {
      return new AutoRefresh.Watched(false, null, List.of(), null);
    }
    ViewState st = d.state();
    ViewDefinition def = d.definition();
    return new AutoRefresh.Watched(def.autoRefresh(),
        st.baseTableVersion() != null ? st.baseTableVersion() : st.watermark(),
        def.sourceQuery().sourceTableId(), fingerprint(def));
  }

  /** What identifies a definition: its kind, its source query and its function's envelope. */
  static String fingerprint(ViewDefinition def) {
    return def.kind().wire() + "\n" + def.sourceQuery().toJson() + "\n"
        + (def.function() == null ? "" : def.function().envelope().sha256Hex());
  }

  /** The table's latest version: DescribeTable's, or its dataset's when a server leaves it out. */
  @Override
  public long latestVersion(List<String> tableId) {
    DescribeTableResponse d = client().describeTable(new DescribeTableRequest().id(tableId));
    if (d.getVersion() != null) {
      return d.getVersion();
    }
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = LanceLocation.of(d.getLocation(), d.getStorageOptions())
            .open(a, null)) {
      return ds.version();
    }
  }

  LanceRestClient client() {
    SparkSession.setActiveSession(spark);
    return ((LanceRestCatalog) spark.sessionState().catalogManager().catalog(catalog)).client();
  }
}
