package io.lancerest.spark.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.junit.jupiter.api.Test;
import org.lance.spark.function.LanceFragmentIdWithDefaultFunction;

/** Value-level behaviour that needs no Spark session. */
class TableHandleAndFunctionsTest {

  @Test
  void toStringNeverShowsCredentialsOrHeaders() {
    TableHandle h =
        TableHandle.builder(List.of("ns", "t"), "s3://bucket/t.lance")
            .storageOptions(Map.of("aws_secret_access_key", "SECRET-1"))
            .namespace("rest", Map.of("uri", "http://x", "header.Authorization", "Bearer SECRET-2"))
            .version(4L)
            .build();
    String text = h.toString();
    assertFalse(text.contains("SECRET"), text);
    assertTrue(text.contains("aws_secret_access_key"), text);
    assertTrue(text.contains("header.Authorization"), text);
    assertTrue(text.contains("version=4"), text);
    assertEquals("ns.t", h.displayName());
    assertEquals(null, h.withVersion(null).version());
  }

  @Test
  void handleCopiesItsMaps() {
    java.util.HashMap<String, String> options = new java.util.HashMap<>(Map.of("k", "v"));
    TableHandle h = TableHandle.builder(List.of("t"), "/tmp/t").storageOptions(options).build();
    options.put("k", "changed");
    assertEquals("v", h.storageOptions().get("k"));
    assertThrows(UnsupportedOperationException.class, () -> h.properties().put("a", "b"));
  }

  @Test
  void fragmentFunctionIsServedFromTheRootNamespace() throws Exception {
    Identifier[] listed = LanceFunctions.listFunctions(new String[0]);
    assertEquals(1, listed.length);
    assertEquals("lance_fragment_or_rand", listed[0].name());
    assertEquals(0, LanceFunctions.listFunctions(new String[] {"db"}).length);
    assertInstanceOf(
        LanceFragmentIdWithDefaultFunction.class,
        LanceFunctions.loadFunction(Identifier.of(new String[0], "LANCE_FRAGMENT_OR_RAND")));
    assertThrows(
        NoSuchFunctionException.class,
        () -> LanceFunctions.loadFunction(Identifier.of(new String[0], "other")));
  }

  @Test
  void datasetConfigKeepsOnlyUserProperties() {
    Map<String, String> config =
        LanceDatasets.datasetConfig(
            Map.of(
                "provider", "lance",
                "owner", "me",
                "option.x", "1",
                "enable_stable_row_ids", "true",
                "team", "data"));
    assertEquals(Map.of("team", "data"), config);
  }
}
