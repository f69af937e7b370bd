package io.lancerest.examples.bench;

import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.mv.engine.DefaultMaterializedViewsFactory;
import io.lancerest.spark.mv.MaterializedViews;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.lance.namespace.RestAdapter;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * What the materialized-view benchmarks share: {@code key=value} arguments, an in-process
 * {@code RestAdapter("dir")} server over a warehouse, one {@code local[*]} SparkSession with
 * catalog {@code lance} and the SQL extensions, and a few statistics.
 */
final class ViewBench implements AutoCloseable {
  final SparkSession spark;
  private final RestAdapter server;
  private final Path dir;
  private final boolean own;

  private ViewBench(SparkSession spark, RestAdapter server, Path dir, boolean own) {
    this.spark = spark;
    this.server = server;
    this.dir = dir;
    this.own = own;
  }

  /** The in-process server's URI. */
  String uri() {
    return "http://127.0.0.1:" + server.getPort();
  }

  /** {@code key=value} arguments. */
  static Map<String, String> args(String[] argv) {
    Map<String, String> args = new LinkedHashMap<>();
    for (String a : argv) {
      int eq = a.indexOf('=');
      if (eq < 1) {
        throw new IllegalArgumentException("Arguments are key=value, got '" + a + "'");
      }
      args.put(a.substring(0, eq), a.substring(eq + 1));
    }
    return args;
  }

  /**
   * Starts the server and the session. Without {@code warehouse=DIR} the warehouse is a
   * temporary directory removed by {@link #close} (a run writes gigabytes); one given is left as
   * it is. {@code log=INFO} shows the refreshes' phase lines.
   */
  static ViewBench start(String app, Map<String, String> args) throws Exception {
    boolean own = !args.containsKey("warehouse");
    Path dir = own ? Files.createTempDirectory(app) : Path.of(args.get("warehouse"));
    RestAdapter server = new RestAdapter("dir", Map.of("root", dir.toString()), "127.0.0.1", 0);
    server.start();
    SparkSession spark = SparkSession.builder().master("local[*]").appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.catalog.lance", "io.lancerest.spark.catalog.LanceRestCatalog")
        .config("spark.sql.catalog.lance.uri", "http://127.0.0.1:" + server.getPort())
        .config(MaterializedViews.FACTORY_CONF, DefaultMaterializedViewsFactory.class.getName())
        .withExtensions(new LanceRestSparkExtensions())
        .withExtensions(new LanceSparkSessionExtensions())
        .getOrCreate();
    spark.sparkContext().setLogLevel(args.getOrDefault("log", "WARN"));
    return new ViewBench(spark, server, dir, own);
  }

  /** The number of versions table {@code ns.table} keeps (lists them: not for a timed part). */
  long versions(String ns, String table) {
    try (io.lancerest.client.LanceRestClient client = io.lancerest.client.LanceRestClient.create(
        Map.of("uri", "http://127.0.0.1:" + server.getPort()));
        org.apache.arrow.memory.BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(client.describeTable(
            io.lancerest.client.model.DescribeTableRequest.of(List.of(ns, table))).location(), a)) {
      return ds.listVersions().size();
    }
  }

  @Override
  public void close() throws Exception {
    try {
      spark.stop();
      server.close();
    } finally {
      if (own) {
        io.lancerest.examples.Warehouses.delete(dir);
      }
    }
  }

  static double secs(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(null);
    return s.get(s.size() / 2);
  }

  static String loadAverage() {
    try {
      return "load " + String.join(" ", List.of(Files.readString(Path.of("/proc/loadavg"))
          .trim().split(" ")).subList(0, 3));
    } catch (Exception e) {
      return "load unknown";
    }
  }
}
