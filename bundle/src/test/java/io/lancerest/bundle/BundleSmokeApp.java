package io.lancerest.bundle;

import java.net.URL;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark application that {@link BundleClusterTest} submits in a separate JVM whose
 * class path holds only Spark's jars, the lance jars and (through {@code --jars}) the bundle.
 *
 * <p>It starts the upstream REST server on the given folder and port, then uses the catalog
 * configured on the {@code spark-submit} command line exactly as a user would. It names no class
 * of ours: the bundle is reached only through configuration. Each check prints one line the
 * parent test asserts on. Exit codes: 0 all done, 1 the catalog part failed (an exception out of
 * {@code main}), {@value #VIEWS_FAILED} only the materialized-view part failed.
 *
 * <p>Arguments: {@code <warehouse dir> <port> [--with-mv [--then-insert]]}; a warehouse of
 * {@code -} starts no server (the catalog's {@code uri} names a running one). With
 * {@code --then-insert} the source gains one more row after the view's refresh, for a refresh
 * job to pick up.
 */
public final class BundleSmokeApp {
  static final int VIEWS_FAILED = 2;

  private BundleSmokeApp() {}

  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[0]);
    int port = Integer.parseInt(args[1]);
    List<String> flags = List.of(args).subList(2, args.length);
    boolean withViews = flags.contains("--with-mv");
    AutoCloseable server = args[0].equals("-") ? () -> { }
        : BundleServerApp.startServer(Map.of("root", warehouse.toString()), port);

    SparkSession spark = SparkSession.builder().getOrCreate();
    int exitCode = 0;
    try {
      reportOrigins();
      readAndWrite(spark);
      System.out.println("CATALOG DONE");
      if (withViews) {
        try {
          queryView(spark);
          if (flags.contains("--then-insert")) {
            sql(spark, "INSERT INTO lance.sales.orders VALUES (7, 'date', 4)");
            System.out.println("PENDING " + rows(spark, "SELECT count(*) FROM lance.sales.orders"));
          }
          System.out.println("VIEWS DONE");
        } catch (RuntimeException e) {
          e.printStackTrace();
          exitCode = VIEWS_FAILED;
        }
      }
    } finally {
      spark.stop();
      server.close();
    }
    if (exitCode != 0) {
      System.exit(exitCode);
    }
  }

  /** Where the classes that matter were loaded from: the bundle, the lance jars, or Spark's. */
  private static void reportOrigins() throws Exception {
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    for (String name : List.of("io.lancerest.spark.catalog.LanceRestCatalog",
        "io.lancerest.shaded.okhttp3.OkHttpClient", "org.apache.arrow.vector.VectorSchemaRoot",
        "org.lance.spark.LanceDataset", "org.apache.spark.sql.SparkSession")) {
      System.out.println("ORIGIN " + name + " " + origin(Class.forName(name, false, loader)));
    }
    try {
      Class.forName("okhttp3.OkHttpClient", false, loader);
      System.out.println("UNRELOCATED okhttp3.OkHttpClient visible");
    } catch (ClassNotFoundException expected) {
      System.out.println("UNRELOCATED okhttp3.OkHttpClient absent");
    }
  }

  private static String origin(Class<?> c) {
    CodeSource source = c.getProtectionDomain().getCodeSource();
    URL url = source == null ? null : source.getLocation();
    return url == null ? "?" : Path.of(url.getPath()).getFileName().toString();
  }

  private static void readAndWrite(SparkSession spark) throws Exception {
    sql(spark, "CREATE NAMESPACE lance.sales");
    sql(spark, "CREATE TABLE lance.sales.orders (id BIGINT, item STRING, qty INT) "
        + "TBLPROPERTIES ('enable_stable_row_ids' = 'true')");
    sql(spark, "INSERT INTO lance.sales.orders VALUES (1, 'apple', 3), (2, 'pear', 1), "
        + "(3, 'plum', 7)");
    // A second commit, written by a DataFrame rather than SQL.
    spark.sql("SELECT 4L AS id, 'fig' AS item, 2 AS qty")
        .writeTo("lance.sales.orders").append();
    System.out.println("TABLES " + rows(spark, "SHOW TABLES IN lance.sales"));
    System.out.println("ROWS " + rows(spark, "SELECT * FROM lance.sales.orders ORDER BY id"));
    System.out.println("FILTERED " + rows(spark,
        "SELECT item FROM lance.sales.orders WHERE qty >= 3 ORDER BY item"));
  }

  private static void queryView(SparkSession spark) {
    sql(spark, "CREATE MATERIALIZED VIEW lance.sales.big_orders AS "
        + "SELECT id, item, qty * 10 AS qty10 FROM lance.sales.orders WHERE qty >= 2");
    System.out.println("VIEW " + rows(spark, "SELECT id, item, qty10 FROM lance.sales.big_orders "
        + "ORDER BY id"));
    sql(spark, "INSERT INTO lance.sales.orders VALUES (5, 'kiwi', 9), (6, 'lime', 0)");
    sql(spark, "REFRESH MATERIALIZED VIEW lance.sales.big_orders");
    System.out.println("VIEW REFRESHED " + rows(spark, "SELECT id, item, qty10 FROM "
        + "lance.sales.big_orders ORDER BY id"));
  }

  private static void sql(SparkSession spark, String statement) {
    spark.sql(statement).collectAsList();
  }

  /** Rows as {@code [a|b|c, ...]}, stable for string assertions. */
  private static String rows(SparkSession spark, String query) {
    return spark.sql(query).collectAsList().stream()
        .map(BundleSmokeApp::row).collect(Collectors.joining(", ", "[", "]"));
  }

  private static String row(Row r) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < r.length(); i++) {
      b.append(i == 0 ? "" : "|").append(r.get(i));
    }
    return b.toString();
  }
}
