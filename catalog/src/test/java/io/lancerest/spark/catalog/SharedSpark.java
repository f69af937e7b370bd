package io.lancerest.spark.catalog;

import io.lancerest.client.testing.RestServerFixture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.SparkSession;

/**
 * The one REST server and the one SparkSession every Spark test class of this package shares:
 * starting Spark costs seconds, so it happens once per JVM and is stopped by a shutdown hook.
 *
 * <p>Catalogs registered in the session:
 * <ul>
 *   <li>{@code lance}: this catalog against the directory server, through a counting proxy;
 *   <li>{@code lance_s}: this catalog against the scripted proxy (rename, table properties,
 *       paged lists of {@value #PAGE_SIZE});
 *   <li>{@code lance_nc}: like {@code lance}, with the table cache disabled;
 *   <li>{@code peer}: lance-spark's own {@code LanceNamespaceSparkCatalog} on the same server.
 * </ul>
 */
final class SharedSpark {
  static final int PAGE_SIZE = 7;
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static SharedSpark instance;

  final RestServerFixture server;
  final ForwardingProxy plain;
  final ForwardingProxy scripted;
  final SparkSession spark;

  private SharedSpark() {
    server = RestServerFixture.start();
    String root = server.rootDir().toUri().toString();
    plain = new ForwardingProxy(server.uri(), root, false, 0);
    scripted = new ForwardingProxy(server.uri(), root, true, PAGE_SIZE);
    String cls = LanceRestCatalog.class.getName();
    spark = SparkSession.builder()
        .master("local[2]")
        .appName("lance-rest-catalog-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.catalog.lance", cls)
        .config("spark.sql.catalog.lance.uri", plain.uri())
        .config("spark.sql.catalog.lance.header.X-Tenant", "tests")
        .config("spark.sql.catalog.lance_s", cls)
        .config("spark.sql.catalog.lance_s.uri", scripted.uri())
        .config("spark.sql.catalog.lance_nc", cls)
        .config("spark.sql.catalog.lance_nc.uri", plain.uri())
        .config("spark.sql.catalog.lance_nc.cache.ttl-ms", "0")
        .config("spark.sql.catalog.peer", "org.lance.spark.LanceNamespaceSparkCatalog")
        .config("spark.sql.catalog.peer.impl", "rest")
        .config("spark.sql.catalog.peer.uri", server.uri())
        .getOrCreate();
    Runtime.getRuntime().addShutdownHook(new Thread(this::stop));
  }

  static synchronized SharedSpark get() {
    if (instance == null) {
      instance = new SharedSpark();
    }
    return instance;
  }

  /** A namespace name no other test uses. */
  static String unique(String prefix) {
    return prefix + "_" + NAMES.incrementAndGet() + "_" + Long.toString(System.nanoTime() % 100000,
        36);
  }

  private void stop() {
    try {
      spark.stop();
    } catch (RuntimeException ignored) {
      // JVM is exiting
    }
    try {
      plain.close();
      scripted.close();
    } catch (Exception ignored) {
      // JVM is exiting
    }
    server.close();
  }
}
