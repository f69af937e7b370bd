package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import java.util.Map;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.junit.jupiter.api.Test;

/** The catalog closes the client it opened; no server is needed for that. */
class CatalogCloseTest {
  @Test
  void closeReleasesTheClientOnceAndLaterStatementsSaySo() {
    LanceRestCatalog c = new LanceRestCatalog();
    c.initialize("closing", new CaseInsensitiveStringMap(Map.of("uri", "http://127.0.0.1:9")));
    LanceRestClient client = c.client();

    c.close();
    c.close();

    assertTrue(client.isClosed());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> c.namespaceExists(new String[] {"ns"}));
    assertTrue(e.getMessage().startsWith("The Lance REST client of http://127.0.0.1:9 is "
        + "closed"), e.getMessage());
  }

  @Test
  void theKeyInstancesShareResourcesByShowsNoOptionValue() {
    CatalogLifecycle.ShareKey key = new CatalogLifecycle.ShareKey("lance",
        Map.of("uri", "http://127.0.0.1:9", "token", "tok-SECRET-1"));
    assertEquals("catalog lance (2 options)", key.toString());
    assertEquals(key, new CatalogLifecycle.ShareKey("lance",
        new java.util.TreeMap<>(Map.of("token", "tok-SECRET-1", "uri", "http://127.0.0.1:9"))));
  }

  @Test
  void anInstanceWhoseInitializeFailedClosesQuietly() {
    LanceRestCatalog c = new LanceRestCatalog();
    io.lancerest.client.error.ClientConfigException e = assertThrows(
        io.lancerest.client.error.ClientConfigException.class,
        () -> c.initialize("broken", new CaseInsensitiveStringMap(Map.of("token", "t"))));
    assertEquals("Option 'uri' is required: the base URL of the Lance REST namespace server, "
        + "e.g. http://localhost:2333", e.getMessage());

    c.close();
    c.close();
  }
}
