package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine acts through the catalog instance's own REST client, which closes with the catalog
 * and with the SparkContext. No server is needed: a closed client fails before sending.
 */
class CatalogBindingTest {
  private static final String CAT = "lance";
  private SparkSession spark;

  @BeforeEach
  void start() {
    SparkSession.clearActiveSession();
    SparkSession.clearDefaultSession();
    // a context of its own: the tests stop it (another class may have left one running)
    scala.Option<org.apache.spark.SparkContext> running =
        org.apache.spark.SparkContext$.MODULE$.getActive();
    if (running.isDefined()) {
      running.get().stop();
    }
    spark = SparkSession.builder().master("local[1]").appName("catalog-binding-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.catalog." + CAT, LanceRestCatalog.class.getName())
        .config("spark.sql.catalog." + CAT + ".uri", "http://127.0.0.1:9")
        .config("spark.sql.catalog." + CAT + ".token", "first-token")
        .getOrCreate();
  }

  @AfterEach
  void stop() {
    spark.stop();
    SparkSession.clearActiveSession();
    SparkSession.clearDefaultSession();
  }

  private LanceRestCatalog catalog() {
    return (LanceRestCatalog) spark.sessionState().catalogManager().catalog(CAT);
  }

  @Test
  void theBindingUsesTheCatalogsOwnClientAndOptions() {
    CatalogBinding b = CatalogBinding.of(spark, CAT);
    assertSame(catalog().client(), b.client());
    assertSame(catalog().catalogOptions(), b.options());
    assertSame(catalog(), b.catalog());
    assertSame(b.client(), CatalogBinding.of(spark, CAT).client());
  }

  @Test
  void aChangedTokenInTheSessionOpensNoSecondClient() {
    LanceRestClient first = CatalogBinding.of(spark, CAT).client();
    spark.conf().set("spark.sql.catalog." + CAT + ".token", "second-token");
    spark.conf().set("spark.sql.catalog." + CAT + ".header.X-Extra", "1");

    LanceRestClient again = CatalogBinding.of(spark, CAT).client();

    // Spark keeps the initialized catalog; the engine has no client of its own to open.
    assertSame(first, again);
    assertSame(catalog().client(), again);
    assertFalse(again.isClosed());
  }

  @Test
  void closingTheCatalogClosesItsClientAndCallsThenFailClearly() {
    LanceRestClient client = CatalogBinding.of(spark, CAT).client();
    catalog().close();
    catalog().close(); // idempotent

    assertTrue(client.isClosed());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> client.namespaceExists(List.of("ns")));
    assertTrue(e.getMessage().startsWith("The Lance REST client of http://127.0.0.1:9 is "
        + "closed"), e.getMessage());
    assertFalse(e.getMessage().contains("first-token"), e.getMessage());
  }

  @Test
  void refreshCachesBelongToTheCatalogAndCloseWithIt() {
    io.lancerest.spark.mv.refresh.RefreshCaches caches = CatalogBinding.of(spark, CAT).caches();
    assertSame(caches, CatalogBinding.of(spark, CAT).caches(), "one per catalog");
    StringBuilder kept = caches.get(StringBuilder.class, () -> new StringBuilder("kept"));
    assertSame(kept, caches.get(StringBuilder.class, StringBuilder::new));

    catalog().close();

    assertEquals("", caches.get(StringBuilder.class, StringBuilder::new).toString(),
        "closing the catalog dropped what its refreshes kept");
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> CatalogBinding.of(catalog()));
    assertTrue(e.getMessage().startsWith("Catalog " + CAT + " is closed"), e.getMessage());
  }

  @Test
  void theFactoryIsFoundUnderItsOldNameToo() {
    spark.conf().set(io.lancerest.spark.mv.MaterializedViews.FACTORY_CONF,
        "io.lancerest.spark.mv.DefaultMaterializedViewsFactory");
    try {
      assertTrue(io.lancerest.spark.mv.MaterializedViews.forCatalog(spark, CAT)
          instanceof EngineViews);
    } finally {
      spark.conf().unset(io.lancerest.spark.mv.MaterializedViews.FACTORY_CONF);
    }
  }

  @Test
  void theCatalogClosesWhenItsSparkContextStops() {
    LanceRestClient client = CatalogBinding.of(spark, CAT).client();
    assertFalse(client.isClosed());

    // SparkContext.stop() posts the application end and drains the listener bus.
    spark.stop();

    assertTrue(client.isClosed());
  }

  @Test
  void aCatalogThatIsNotALanceRestCatalogIsAClearError() {
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> CatalogBinding.of(spark, "spark_catalog"));
    assertTrue(e.getMessage().startsWith("Catalog 'spark_catalog' is a "), e.getMessage());
    assertTrue(e.getMessage().endsWith("; materialized views need a "
        + "io.lancerest.spark.catalog.LanceRestCatalog: set spark.sql.catalog.spark_catalog to "
        + "it, or name a catalog that is one"), e.getMessage());

    MaterializedViewException missing = assertThrows(MaterializedViewException.class,
        () -> CatalogBinding.of(spark, "nowhere"));
    assertEquals("Catalog 'nowhere' is not configured: set spark.sql.catalog.nowhere = "
        + "io.lancerest.spark.catalog.LanceRestCatalog and its uri", missing.getMessage());
  }
}
