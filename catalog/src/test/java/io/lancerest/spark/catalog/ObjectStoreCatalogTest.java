package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.S3ProxyFixture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.lance.namespace.RestAdapter;

/**
 * The catalog on S3: lance-core's dir namespace server rooted at {@code s3://lance-test/warehouse}
 * on s3proxy (a child JVM, {@link S3ProxyFixture}), and the same statements on the local-folder
 * catalog {@code lance} of {@link SharedSpark}, whose results must be the same.
 *
 * <p>lance-core 4.0.0's dir server keeps its {@code storage.*} properties to itself (its
 * DeclareTable and DescribeTable answers carry no {@code storage_options}), so the catalog
 * {@code lance_s3} is given the same options as {@code storage.*} catalog options, and
 * {@code lance_s3n}, without them, shows what a user sees when they are missing.
 */
@Tag("slow")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ObjectStoreCatalogTest {
  private static final String ROOT = "warehouse";

  private S3ProxyFixture s3;
  private RestAdapter server;
  private SharedSpark shared;
  private SparkSession spark;
  private final List<String> namespaces = new ArrayList<>();

  @BeforeAll
  void start() {
    shared = SharedSpark.get();
    spark = shared.spark;
    s3 = S3ProxyFixture.start();
    try {
      Map<String, String> props = new HashMap<>(s3.storageOptions("storage."));
      props.put("root", s3.uri(ROOT));
      server = new RestAdapter("dir", props, "127.0.0.1", 0);
      server.start();
    } catch (RuntimeException e) {
      stop();
      throw new AssertionError("the dir namespace server on " + s3.uri(ROOT)
          + " did not start: " + e, e);
    }
    String cls = LanceRestCatalog.class.getName();
    String uri = "http://127.0.0.1:" + server.getPort();
    spark.conf().set("spark.sql.catalog.lance_s3", cls);
    spark.conf().set("spark.sql.catalog.lance_s3.uri", uri);
    s3.storageOptions("spark.sql.catalog.lance_s3.storage.").forEach(spark.conf()::set);
    spark.conf().set("spark.sql.catalog.lance_s3n", cls);
    spark.conf().set("spark.sql.catalog.lance_s3n.uri", uri);
  }

  @AfterAll
  void stop() {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      if (s3 != null) {
        s3.close();
      }
    }
  }

  private List<String> rows(String sql) {
    List<String> out = new ArrayList<>();
    for (Row r : spark.sql(sql).collectAsList()) {
      out.add(r.toString());
    }
    out.sort(null);
    return out;
  }

  /**
   * The statements of the scenario on {@code catalog}; what each step shows, by step name. The
   * namespace is {@code ns} in every catalog, so the results compare as they are.
   */
  private Map<String, List<String>> scenario(String catalog, String ns) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    String n = catalog + "." + ns;
    spark.sql("CREATE NAMESPACE " + n);
    out.put("namespaces", rows("SHOW NAMESPACES IN " + catalog).stream()
        .filter(s -> s.equals("[" + ns + "]")).toList());
    spark.sql("CREATE TABLE " + n + ".src (id BIGINT, name STRING)");
    spark.sql("INSERT INTO " + n + ".src VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')");
    spark.sql("CREATE TABLE " + n + ".t AS SELECT id, name, id * 10 AS v FROM " + n + ".src");
    out.put("ctas", rows("SELECT * FROM " + n + ".t"));
    spark.sql("INSERT INTO " + n + ".t VALUES (6, 'f', 60), (7, 'g', 70)");
    out.put("insert", rows("SELECT * FROM " + n + ".t"));
    spark.sql("DELETE FROM " + n + ".t WHERE id = 2");
    out.put("delete", rows("SELECT * FROM " + n + ".t"));
    spark.sql("UPDATE " + n + ".t SET v = v + 1, name = upper(name) WHERE id IN (3, 6)");
    out.put("update", rows("SELECT * FROM " + n + ".t"));
    spark.sql("SELECT * FROM VALUES (4L, 'D', 400L), (8L, 'h', 80L) AS s(id, name, v)")
        .createOrReplaceTempView("os_merge_src");
    spark.sql("MERGE INTO " + n + ".t t USING os_merge_src s ON t.id = s.id "
        + "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
    out.put("merge", rows("SELECT * FROM " + n + ".t"));
    for (int v = 1; v <= 5; v++) {
      out.put("version " + v, rows("SELECT * FROM " + n + ".t VERSION AS OF " + v));
    }
    out.put("filtered", rows("SELECT id, v FROM " + n + ".t WHERE v > 35 AND name <> 'g'"));
    out.put("count", rows("SELECT count(*) FROM " + n + ".t"));
    out.put("tables", rows("SHOW TABLES IN " + n));
    return out;
  }

  private String location(String catalog, String table) throws Exception {
    TableCatalog c = (TableCatalog) spark.sessionState().catalogManager().catalog(catalog);
    String[] parts = table.split("\\.");
    return c.loadTable(Identifier.of(new String[] {parts[0]}, parts[1])).properties()
        .get("location");
  }

  /** The bucket key prefix of an {@code s3://lance-test/...} location, with a trailing slash. */
  private static String keyPrefix(String location) {
    String p = "s3://" + S3ProxyFixture.BUCKET + "/";
    assertTrue(location.startsWith(p), "an S3 location: " + location);
    String k = location.substring(p.length());
    return k.endsWith("/") ? k : k + "/";
  }

  @Test
  void tablesOnS3GiveTheLocalResults() throws Exception {
    for (String catalog : List.of("lance_s3")) {
      String root = ROOT;
      String ns = SharedSpark.unique("os");
      namespaces.add(ns);
      Map<String, List<String>> local = scenario("lance", ns);
      Map<String, List<String>> onS3 = scenario(catalog, ns);
      for (String step : local.keySet()) {
        assertEquals(local.get(step), onS3.get(step), catalog + ": step '" + step + "'");
      }
      assertEquals(List.of("[" + ns + "]"), onS3.get("namespaces"), catalog);
      assertFalse(onS3.get("version 5").isEmpty(), catalog + ": time travel read rows");

      String t = ns + ".t";
      String src = ns + ".src";
      String tPrefix = keyPrefix(location(catalog, t));
      String srcPrefix = keyPrefix(location(catalog, src));
      assertTrue(tPrefix.startsWith(root + "/"), tPrefix);
      List<String> tKeys = s3.keys(tPrefix);
      assertTrue(tKeys.stream().anyMatch(k -> k.contains("_versions/")),
          catalog + ": the table's manifests are on S3: " + tKeys);
      assertTrue(tKeys.stream().anyMatch(k -> k.contains("data/")),
          catalog + ": the table's data files are on S3: " + tKeys);

      // Nothing outside the namespace server's root.
      List<String> outside = s3.keys("").stream()
          .filter(k -> !k.startsWith(ROOT + "/")).toList();
      assertEquals(List.of(), outside, "objects outside the roots");

      // DROP deregisters and keeps the data; PURGE deletes every object of the table.
      spark.sql("DROP TABLE " + catalog + "." + src);
      assertFalse(s3.keys(srcPrefix).isEmpty(), catalog + ": DROP TABLE keeps the data");
      spark.sql("DROP TABLE " + catalog + "." + t + " PURGE");
      assertEquals(List.of(), s3.keys(tPrefix), catalog + ": PURGE leaves no object");
      assertEquals(List.of(), rows("SHOW TABLES IN " + catalog + "." + ns), catalog);
      spark.sql("DROP NAMESPACE " + catalog + "." + ns + " CASCADE");
      assertFalse(rows("SHOW NAMESPACES IN " + catalog).contains("[" + ns + "]"), catalog);
      spark.sql("DROP NAMESPACE lance." + ns + " CASCADE");
    }
    // No table data went to a local folder: nothing named like the scenario's namespaces in the
    // temporary folder or the working directory, but for the local catalog's own root and
    // s3proxy's backend.
    List<Path> allowed = List.of(shared.server.rootDir(), s3.bucketDir().getParent());
    for (Path dir : List.of(Path.of(System.getProperty("java.io.tmpdir")), Path.of(""))) {
      assertEquals(List.of(), namedLike(dir, namespaces, allowed), "local copies in " + dir);
    }
  }

  @Test
  void withoutStorageOptionsTheTableFailsNamingNoSecret() {
    String ns = SharedSpark.unique("osn");
    spark.sql("CREATE NAMESPACE lance_s3n." + ns);
    Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
        () -> spark.sql("CREATE TABLE lance_s3n." + ns + ".t (id BIGINT)"));
    String all = messages(e);
    // object_store, without the endpoint and region, asks AWS for the bucket's region.
    assertTrue(all.contains("Failed to resolve region for bucket '" + S3ProxyFixture.BUCKET + "'"),
        all);
    assertFalse(all.contains(S3ProxyFixture.SECRET_KEY), "no secret in the error");
    assertEquals(List.of(), rows("SHOW TABLES IN lance_s3n." + ns),
        "a failed CREATE TABLE leaves no table declared");
    spark.sql("DROP NAMESPACE lance_s3n." + ns);
  }

  private static String messages(Throwable e) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      sb.append(t).append('\n');
    }
    return sb.toString();
  }

  /**
   * Paths up to 6 levels below {@code dir} whose name holds one of {@code names}, but for those
   * below {@code except}. Folders that cannot be read (or vanish while walked) are skipped.
   */
  static List<String> namedLike(Path dir, List<String> names, List<Path> except) {
    List<String> found = new ArrayList<>();
    List<Path> skip = except.stream().map(Path::toAbsolutePath).toList();
    try {
      Files.walkFileTree(dir.toAbsolutePath(), java.util.EnumSet.noneOf(
          java.nio.file.FileVisitOption.class), 6, new java.nio.file.SimpleFileVisitor<>() {
        @Override
        public java.nio.file.FileVisitResult preVisitDirectory(Path d,
            java.nio.file.attribute.BasicFileAttributes a) {
          if (skip.stream().anyMatch(d::startsWith)) {
            return java.nio.file.FileVisitResult.SKIP_SUBTREE;
          }
          check(d);
          return java.nio.file.FileVisitResult.CONTINUE;
        }

        @Override
        public java.nio.file.FileVisitResult visitFile(Path f,
            java.nio.file.attribute.BasicFileAttributes a) {
          check(f);
          return java.nio.file.FileVisitResult.CONTINUE;
        }

        @Override
        public java.nio.file.FileVisitResult visitFileFailed(Path f, IOException e) {
          return java.nio.file.FileVisitResult.CONTINUE;
        }

        private void check(Path p) {
          if (p.getFileName() != null
              && names.stream().anyMatch(n -> p.getFileName().toString().contains(n))) {
            found.add(p.toString());
          }
        }
      });
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return found;
  }
}
