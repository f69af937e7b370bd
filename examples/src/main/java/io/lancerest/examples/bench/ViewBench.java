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
            new io.lancerest.client.model.DescribeTableRequest().id(List.of(ns, table)))
                .getLocation(), a)) {
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

  /** One change size of a refresh sweep: its size, and the median refresh times (s). */
  record SweepPoint(double size, double incremental, double full) {}

  /** A change a sweep makes to the source before it refreshes. */
  interface Change {
    /**
     * Changes the source by {@code size} (each benchmark says in what unit) in its {@code
     * step}-th call; returns the size to plot (for example the rows changed).
     */
    double apply(double size, int step);
  }

  /** The sizes of {@code sweep=0.001,0.01,0.1} ({@code key}); empty when not given. */
  static List<Double> sizes(Map<String, String> args, String key) {
    List<Double> sizes = new ArrayList<>();
    for (String s : args.getOrDefault(key, "").split(",")) {
      if (!s.isBlank()) {
        sizes.add(Double.parseDouble(s.trim()));
      }
    }
    return sizes;
  }

  /**
   * Refresh time against the size of the change. {@code rounds} times, for each size in turn:
   * {@code change}, then a timed {@code REFRESH} of {@code view} (incremental where the view's
   * kind refreshes so), then a timed {@code REFRESH … WITH (force = true)}, a rebuild of the same
   * source version (the peer). Per size, the median of each.
   */
  static List<SweepPoint> sweep(SparkSession spark, String view, List<Double> sizes, int rounds,
      Change change) {
    List<List<Double>> inc = new ArrayList<>();
    List<List<Double>> full = new ArrayList<>();
    double[] plotted = new double[sizes.size()];
    for (int i = 0; i < sizes.size(); i++) {
      inc.add(new ArrayList<>());
      full.add(new ArrayList<>());
    }
    int step = 0;
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < sizes.size(); i++) {
        plotted[i] = change.apply(sizes.get(i), step++);
        long t = System.nanoTime();
        spark.sql("REFRESH MATERIALIZED VIEW " + view).collectAsList();
        inc.get(i).add(secs(t));
        t = System.nanoTime();
        spark.sql("REFRESH MATERIALIZED VIEW " + view + " WITH (force = true)").collectAsList();
        full.get(i).add(secs(t));
        System.out.printf("  sweep round %d, size %s (%,.0f): refresh %.2f s, forced full "
            + "refresh %.2f s%n", r, sizes.get(i), plotted[i], last(inc.get(i)),
            last(full.get(i)));
      }
    }
    List<SweepPoint> points = new ArrayList<>();
    for (int i = 0; i < sizes.size(); i++) {
      points.add(new SweepPoint(plotted[i], median(inc.get(i)), median(full.get(i))));
      System.out.printf("sweep: size %,.0f: refresh %.3f s, full %.3f s (medians of %d)%n",
          plotted[i], median(inc.get(i)), median(full.get(i)), rounds);
    }
    return points;
  }

  private static double last(List<Double> xs) {
    return xs.get(xs.size() - 1);
  }

  /**
   * Whether two queries hold the same rows, by their row count and the sum of a 64-bit hash of
   * each row (order does not matter): cheap enough to run after every benchmark round. Prints
   * the outcome; {@code true} when both agree.
   */
  static boolean sameRows(SparkSession spark, String label, String actual, String expected) {
    org.apache.spark.sql.Row a = spark.sql("SELECT count(*), sum(xxhash64(*)) FROM (" + actual
        + ")").first();
    org.apache.spark.sql.Row e = spark.sql("SELECT count(*), sum(xxhash64(*)) FROM (" + expected
        + ")").first();
    boolean same = a.getLong(0) == e.getLong(0) && java.util.Objects.equals(a.get(1), e.get(1));
    System.out.printf("    check after %s: %,d rows, hash sum %s: %s%n", label, a.getLong(0),
        a.get(1), same ? "equal to the SELECT" : "DIFFERENT from the SELECT (" + e.getLong(0)
        + " rows, hash sum " + e.get(1) + ")");
    return same;
  }

  /**
   * Times five REFRESHes of {@code view} with nothing to do, the statement's fixed cost, and
   * prints their median against {@code fullSeconds}.
   */
  static void noopRefreshes(SparkSession spark, String view, double fullSeconds) {
    List<Double> noop = new ArrayList<>();
    for (int r = 0; r < 5; r++) {
      long t = System.nanoTime();
      spark.sql("REFRESH MATERIALIZED VIEW " + view).collectAsList();
      noop.add(secs(t));
    }
    System.out.printf("(b) a REFRESH with nothing to do (the statement's fixed cost): median "
        + "%.3f s = %.3f of the full refresh%n", median(noop), median(noop) / fullSeconds);
  }

  /** Column of the REFRESH result row with the job's own duration (ms). */
  static final int DURATION = 7;

  /** Times {@code CREATE TABLE table AS select}, the peer of a view's full refresh. */
  static double timeCtas(SparkSession spark, String select, String table) {
    long t = System.nanoTime();
    spark.sql("CREATE TABLE " + table + " AS " + select);
    return secs(t);
  }

  /** Creates {@code view} WITH NO DATA and times its first (full) REFRESH. */
  static double timeFullRefresh(SparkSession spark, String select, String view) {
    spark.sql("CREATE MATERIALIZED VIEW " + view + " AS " + select + " WITH NO DATA");
    long t = System.nanoTime();
    org.apache.spark.sql.Row r = spark.sql("REFRESH MATERIALIZED VIEW " + view)
        .collectAsList().get(0);
    double s = secs(t);
    System.out.printf("  %s: full refresh %.2f s, of which the refresh job %.2f s%n",
        view.substring(view.lastIndexOf('.') + 1), s, r.getLong(DURATION) / 1e3);
    return s;
  }

  static double secs(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(null);
    return s.get(s.size() / 2);
  }

  /** The 1-minute load average, NaN when unknown. */
  static double load1() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split(" ")[0]);
    } catch (Exception e) {
      return Double.NaN;
    }
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
