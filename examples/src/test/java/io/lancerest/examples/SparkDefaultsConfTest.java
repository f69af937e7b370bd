package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.error.ClientConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.namespace.RestAdapter;

/**
 * The configuration the docs give to spark-shell, spark-sql and PySpark
 * ({@code examples/conf/spark-defaults.conf}) works as written: a session built from it (only
 * the uri pointed at an in-process server) runs catalog statements and materialized views.
 */
class SparkDefaultsConfTest {
  @TempDir
  static Path warehouse;
  private static RestAdapter server;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws Exception {
    server = new RestAdapter("dir", Map.of("root", warehouse.toString()), "127.0.0.1", 0);
    server.start();
    spark = ExampleSpark.session("spark-defaults-conf-test",
        "http://127.0.0.1:" + server.getPort());
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void fileHasTheDocumentedSettings() throws Exception {
    Map<String, String> conf = ExampleSpark.defaults(ExampleSpark.confFile());
    assertEquals(List.of("spark.sql.catalog.lance", "spark.sql.catalog.lance.uri",
        "spark.sql.defaultCatalog", "spark.sql.extensions", "spark.driver.extraClassPath",
        "spark.executor.extraClassPath", "spark.jars"), List.copyOf(conf.keySet()));
    assertEquals("io.lancerest.spark.catalog.LanceRestCatalog", conf.get("spark.sql.catalog.lance"));
    assertEquals("http://127.0.0.1:2333", conf.get("spark.sql.catalog.lance.uri"));
    // The lance jars must precede Spark's Arrow (docs/packaging.md): never in spark.jars.
    assertTrue(conf.get("spark.driver.extraClassPath").endsWith("/lance-jars/*"));
    assertEquals(conf.get("spark.driver.extraClassPath"),
        conf.get("spark.executor.extraClassPath"));
    assertTrue(conf.get("spark.jars").endsWith("/lance-rest-spark-bundle-0.1.0-SNAPSHOT.jar"),
        conf.get("spark.jars"));
  }

  @Test
  void pysparkSnippetReadsTheSameFile() throws Exception {
    Path py = Files.exists(Path.of("pyspark")) ? Path.of("pyspark", "quickstart.py")
        : Path.of("examples", "pyspark", "quickstart.py");
    String text = Files.readString(py);
    assertTrue(text.contains("conf/spark-defaults.conf"), "quickstart.py must load the conf file");
  }

  @Test
  void statementsRunInTheDefaultCatalog() {
    assertEquals("lance", spark.catalog().currentCatalog());
    spark.sql("CREATE NAMESPACE conf_ns");
    List<String> namespaces = spark.sql("SHOW NAMESPACES").collectAsList().stream()
        .map(r -> r.getString(0)).toList();
    assertTrue(namespaces.contains("conf_ns"), namespaces.toString());
    spark.sql("CREATE TABLE conf_ns.t (id BIGINT, name STRING)");
    spark.sql("INSERT INTO conf_ns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    assertEquals(List.of("2:b", "3:c"), spark.sql("SELECT id, name FROM lance.conf_ns.t "
        + "WHERE id > 1 ORDER BY id").collectAsList().stream()
        .map(r -> r.getLong(0) + ":" + r.getString(1)).toList());

    // The SQL extension from the file: a query view, created then refreshed incrementally.
    Row created = spark.sql("CREATE MATERIALIZED VIEW conf_ns.v AS SELECT id FROM conf_ns.t "
        + "WHERE id >= 2").collectAsList().get(0);
    assertEquals("query", created.getAs("kind"));
    assertEquals(2L, (long) created.getAs("rows_inserted"));
    spark.sql("INSERT INTO conf_ns.t VALUES (4, 'd')");
    Row refreshed = spark.sql("REFRESH MATERIALIZED VIEW conf_ns.v").collectAsList().get(0);
    assertEquals(1L, (long) refreshed.getAs("rows_inserted"));
    assertEquals(3L, spark.table("conf_ns.v").count());

    // Index statements of the extension from the file (lance-spark's is not listed there)
    assertEquals("[[2,id_idx]]", spark.sql("ALTER TABLE conf_ns.v CREATE INDEX id_idx USING "
        + "bitmap (id)").collectAsList().toString());
    assertEquals("[[id_idx,WrappedArray(id),bitmap,2,3,0,0,1]]", spark.sql("SHOW INDEXES FROM "
        + "conf_ns.v").collectAsList().toString());
  }

  @Test
  void unknownCatalogOptionFailsNamingIt() {
    // Settings are checked when the catalog starts: a typo in the file is not silently ignored.
    spark.conf().set("spark.sql.catalog.typo", "io.lancerest.spark.catalog.LanceRestCatalog");
    spark.conf().set("spark.sql.catalog.typo.uri", "http://127.0.0.1:" + server.getPort());
    spark.conf().set("spark.sql.catalog.typo.cache.ttl", "5");
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> spark.sql("SHOW NAMESPACES IN typo"));
    assertTrue(e.getMessage().startsWith("Unknown option(s) [cache.ttl] for catalog 'typo' "
        + "(spark.sql.catalog.typo.<option>). Known options: "), e.getMessage());
  }
}
