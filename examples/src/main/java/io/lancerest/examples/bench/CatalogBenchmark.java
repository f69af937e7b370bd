package io.lancerest.examples.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.lance.namespace.RestAdapter;

/**
 * This catalog against lance-spark's own {@code LanceNamespaceSparkCatalog} ({@code impl=rest})
 * on one in-process {@code RestAdapter("dir")} server, in one JVM and one SparkSession, so both
 * meet the same JIT state, server, page cache and machine load. Rounds alternate which catalog
 * goes first; best and median are reported. Not a test: it prints figures and ratios.
 *
 * <ul>
 *   <li>(a) N x {@code SELECT count(*)} spread over T small tables (target ours/peer &le; 0.8);
 *   <li>(b) REST requests per statement (SELECT, INSERT, DESCRIBE), counted at a forwarding
 *       proxy that a second instance of each catalog points at;
 *   <li>(c) {@code SELECT k, count(*), sum(v), max(name) ... GROUP BY k} over a table of R rows
 *       (target &le; 0.95);
 *   <li>(d) what reads that lance-core cannot scan linearly cost with this catalog's guard
 *       (docs/lance-core-scan-defect.md): the same aggregate with {@code WHERE id % 3 = 0} on the
 *       table as written, after an UPDATE of 0.1 % of the rows spread over every fragment
 *       (fragments with deletions), and after a compaction of that (rewritten row ids); against
 *       the peer on the table as written and, where the peer's scan would never end, against
 *       the peer with {@code pushDownFilters = false} (what a user of the peer can do).
 * </ul>
 * Arguments, all optional: {@code queries=200 tables=20 rows=5000000 rounds=5 scan-rounds=9
 * parts=abcd warehouse=DIR charts=docs/img}. The medians of (a), (c) and (d1) go to the bar
 * chart {@code catalog-latency.png} ({@code charts=DIR|none}, see {@link Charts}).
 */
public final class CatalogBenchmark {
  private static final String OURS = "ours";
  private static final String PEER = "peer";
  private static final String OURS_NO_CACHE = "ours_nc";
  private static final String NS = "bench";
  /** The big table's rows: the shape of the reported scattered-UPDATE case. */
  private static final String BIG_ROW = "id, CAST(id % 1000 AS INT) AS k, id * 0.5 AS v, "
      + "concat('name', CAST(id AS STRING)) AS name";
  private static final String AGGREGATE = "SELECT k, count(*) AS n, sum(v) AS s, max(name) AS m "
      + "FROM %s %s GROUP BY k";

  private final SparkSession spark;
  private final CountingProxy proxy;
  private final int queries;
  private final int tables;
  private final long rows;
  private final int rounds;
  private final int scanRounds;
  private final String parts;
  /** Statement label to {ours, peer} median milliseconds, for the chart. */
  private final Map<String, double[]> medians = new LinkedHashMap<>();

  private CatalogBenchmark(SparkSession spark, CountingProxy proxy, Map<String, String> args) {
    this.spark = spark;
    this.proxy = proxy;
    this.queries = Integer.parseInt(args.getOrDefault("queries", "200"));
    this.tables = Integer.parseInt(args.getOrDefault("tables", "20"));
    this.rows = Long.parseLong(args.getOrDefault("rows", "5000000"));
    this.rounds = Integer.parseInt(args.getOrDefault("rounds", "5"));
    // A scan is one statement, so a burst of load skews it more: more rounds.
    this.scanRounds = Integer.parseInt(args.getOrDefault("scan-rounds", "9"));
    this.parts = args.getOrDefault("parts", "abcd");
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    Charts charts = Charts.of(args);
    Path warehouse = Path.of(args.getOrDefault("warehouse", "target/bench-warehouse"))
        .toAbsolutePath();
    reset(warehouse);
    RestAdapter server = new RestAdapter("dir", Map.of("root", warehouse.toString()),
        "127.0.0.1", 0);
    server.start();
    String uri = "http://127.0.0.1:" + server.getPort();
    SparkSession spark = null;
    try (CountingProxy proxy = new CountingProxy(uri)) {
      String ours = "io.lancerest.spark.catalog.LanceRestCatalog";
      String peer = "org.lance.spark.LanceNamespaceSparkCatalog";
      spark = SparkSession.builder()
          .appName("lance-rest-catalog-benchmark")
          .master("local[2]")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          // Timed instances talk to the server directly.
          .config("spark.sql.catalog." + OURS, ours)
          .config("spark.sql.catalog." + OURS + ".uri", uri)
          .config("spark.sql.catalog." + OURS_NO_CACHE, ours)
          .config("spark.sql.catalog." + OURS_NO_CACHE + ".uri", uri)
          .config("spark.sql.catalog." + OURS_NO_CACHE + ".cache.ttl-ms", "0")
          .config("spark.sql.catalog." + PEER, peer)
          .config("spark.sql.catalog." + PEER + ".impl", "rest")
          .config("spark.sql.catalog." + PEER + ".uri", uri)
          // Counted instances go through the proxy.
          .config("spark.sql.catalog.ours_c", ours)
          .config("spark.sql.catalog.ours_c.uri", proxy.uri())
          .config("spark.sql.catalog.peer_c", peer)
          .config("spark.sql.catalog.peer_c.impl", "rest")
          .config("spark.sql.catalog.peer_c.uri", proxy.uri())
          .getOrCreate();
      spark.sparkContext().setLogLevel("WARN");
      System.out.printf("== Catalog benchmark: server %s, warehouse %s%n", uri, warehouse);
      System.out.printf("   load average at start: %s%n", loadAverage());
      CatalogBenchmark bench = new CatalogBenchmark(spark, proxy, args);
      long start = System.nanoTime();
      bench.setUp();
      if (bench.parts.contains("a")) {
        bench.manySmallSelects();
      }
      if (bench.parts.contains("b")) {
        bench.requestsPerStatement();
      }
      if (bench.parts.contains("c")) {
        bench.bigScan();
      }
      if (bench.parts.contains("d")) {
        bench.guardCost(uri);
      }
      System.out.printf("%n== Done in %.0f s; load average at end: %s%n",
          (System.nanoTime() - start) / 1e9, loadAverage());
      bench.chart(charts);
    } finally {
      if (spark != null) {
        spark.stop();
      }
      server.close();
      reset(warehouse);
    }
  }

  // ---------------------------------------------------------------- set-up

  private void setUp() {
    long t0 = System.nanoTime();
    sql("CREATE NAMESPACE " + OURS + "." + NS);
    for (int i = 0; i < tables; i++) {
      sql("CREATE TABLE " + small(OURS, i) + " AS SELECT id, concat('v', id) AS v FROM range(100)");
    }
    sql("CREATE TABLE " + OURS + "." + NS + ".counted (id BIGINT, v STRING)");
    sql("INSERT INTO " + OURS + "." + NS + ".counted VALUES (0, 'a')");
    // Four write tasks: four fragments, read by two cores.
    if (parts.contains("c") || parts.contains("d")) {
      sql("CREATE TABLE " + OURS + "." + NS + ".big AS SELECT " + BIG_ROW
          + " FROM range(0, " + rows + ", 1, 4)");
    }
    System.out.printf("   set-up through '%s': %d small tables%s in %.1f s%n", OURS, tables,
        parts.contains("c") || parts.contains("d") ? String.format(", 1 table of %,d rows", rows)
        : "",
        (System.nanoTime() - t0) / 1e9);
  }

  private String small(String catalog, int i) {
    return catalog + "." + NS + ".s" + i;
  }

  // ---------------------------------------------------------------- (a)

  /**
   * The catalogs take turns statement by statement (the order rotating each time), so a burst of
   * load on the machine hits all of them alike; a round's time per catalog is the sum of its
   * {@code queries} statements.
   */
  private void manySmallSelects() {
    System.out.printf("%n== (a) %d x SELECT count(*) over %d tables per catalog and round, %d "
        + "rounds after a warm-up round; catalogs interleaved statement by statement%n",
        queries, tables, rounds);
    List<String> order = new ArrayList<>(List.of(OURS, PEER, OURS_NO_CACHE));
    Map<String, List<Long>> times = new LinkedHashMap<>();
    Map<String, List<Long>> single = new LinkedHashMap<>();
    order.forEach(c -> {
      times.put(c, new ArrayList<>());
      single.put(c, new ArrayList<>());
    });
    for (int r = -1; r < rounds; r++) {
      Map<String, Long> round = new LinkedHashMap<>();
      for (int i = 0; i < queries; i++) {
        for (String c : order) {
          long t = countStatement(c, i % tables);
          round.merge(c, t, Long::sum);
          if (r >= 0) {
            single.get(c).add(t);
          }
        }
        java.util.Collections.rotate(order, 1);
      }
      if (r >= 0) { // round -1 is the warm-up
        round.forEach((c, t) -> times.get(c).add(t));
      }
    }
    printTimes(times, "(a)", 0.8);
    for (var e : single.entrySet()) {
      System.out.printf("   %-8s per statement: median %6.2f ms%n", e.getKey(),
          median(e.getValue()) / 1e6);
    }
    System.out.printf("   per-statement median ratio ours/peer: %.3f%n",
        median(single.get(OURS)) / median(single.get(PEER)));
    keep("(a) count(*), 100 rows", single);
    System.out.printf("   ('%s' is this catalog with cache.ttl-ms=0: every statement describes "
        + "the table again)%n", OURS_NO_CACHE);
  }

  private long countStatement(String catalog, int table) {
    long t0 = System.nanoTime();
    long n = spark.sql("SELECT count(*) FROM " + small(catalog, table)).collectAsList()
        .get(0).getLong(0);
    long elapsed = System.nanoTime() - t0;
    if (n != 100) {
      throw new IllegalStateException(catalog + " counted " + n + " rows instead of 100");
    }
    return elapsed;
  }

  // ---------------------------------------------------------------- (b)

  private void requestsPerStatement() {
    System.out.printf("%n== (b) REST requests per statement, counted at a forwarding proxy "
        + "(cold: catalog's table cache emptied first; warm: mean of the next 5)%n");
    String[] kinds = {"SELECT count(*) FROM %s", "SELECT * FROM %s WHERE id > 0",
        "INSERT INTO %s VALUES (1, 'x')", "DESCRIBE TABLE %s", "DESCRIBE TABLE EXTENDED %s"};
    System.out.printf("   %-28s %-6s %6s %6s   %s%n", "statement", "cat", "cold", "warm",
        "cold requests by route");
    for (String kind : kinds) {
      for (String catalog : List.of("ours_c", "peer_c")) {
        String table = catalog + "." + NS + ".counted";
        String statement = String.format(kind, table);
        invalidate(catalog);
        proxy.reset();
        spark.sql(statement).collectAsList();
        long cold = proxy.total();
        Map<String, Long> routes = proxy.counts();
        proxy.reset();
        for (int i = 0; i < 5; i++) {
          spark.sql(statement).collectAsList();
        }
        double warm = proxy.total() / 5.0;
        System.out.printf("   %-28s %-6s %6d %6.1f   %s%n",
            String.format(kind, "t").replace(" FROM t", "").replace(" TABLE t", ""),
            catalog.replace("_c", ""), cold, warm, routes);
      }
    }
  }

  private void invalidate(String catalog) {
    var tc = (org.apache.spark.sql.connector.catalog.TableCatalog)
        spark.sessionState().catalogManager().catalog(catalog);
    tc.invalidateTable(Identifier.of(new String[] {NS}, "counted"));
  }

  // ---------------------------------------------------------------- (c)

  private void bigScan() {
    System.out.printf("%n== (c) SELECT k, count(*), sum(v), max(name) ... GROUP BY k over %,d "
        + "rows, %d rounds after a warm-up, alternating order%n", rows, scanRounds);
    Map<String, String> queries = new LinkedHashMap<>();
    for (String c : List.of(OURS, PEER)) {
      queries.put(c, String.format(AGGREGATE, c + "." + NS + ".big", ""));
    }
    Map<String, List<Long>> times = interleaved(queries);
    printTimes(times, "(c)", 0.95);
    keep("(c) GROUP BY, " + millions(rows) + " rows", times);
  }

  /**
   * The same statement per catalog, timed in turns (rotating who goes first) after one warm-up
   * each; every answer must equal the first catalog's.
   */
  private Map<String, List<Long>> interleaved(Map<String, String> queries) {
    List<String> order = new ArrayList<>(queries.keySet());
    String expected = null;
    for (String c : order) {
      String got = checksum(queries.get(c));
      if (expected == null) {
        expected = got;
      } else if (!expected.equals(got)) {
        throw new IllegalStateException(c + " answered " + got + ", " + order.get(0)
            + " answered " + expected);
      }
    }
    Map<String, List<Long>> times = new LinkedHashMap<>();
    order.forEach(c -> times.put(c, new ArrayList<>()));
    for (int r = 0; r < scanRounds; r++) {
      for (String c : order) {
        long t0 = System.nanoTime();
        String got = checksum(queries.get(c));
        times.get(c).add(System.nanoTime() - t0);
        if (!expected.equals(got)) {
          throw new IllegalStateException(c + " answered " + got + " in round " + r);
        }
      }
      java.util.Collections.rotate(order, 1);
    }
    return times;
  }

  /** The aggregate's answer, collected to the driver and folded into one string. */
  private String checksum(String statement) {
    long n = 0;
    java.math.BigDecimal s = java.math.BigDecimal.ZERO;
    long groups = 0;
    long maxHash = 0;
    for (Row r : spark.sql(statement).collectAsList()) {
      groups++;
      n += r.getLong(1);
      s = s.add(r.getDecimal(2));
      maxHash += r.getString(3).hashCode();
    }
    return groups + "/" + n + "/" + s.stripTrailingZeros().toPlainString() + "/" + maxHash;
  }

  // ---------------------------------------------------------------- (d)

  private void guardCost(String serverUri) throws Exception {
    System.out.printf("%n== (d) the guard: SELECT k, count(*), sum(v), max(name) WHERE id %% 3 = "
        + "0 GROUP BY k, %d rounds after a warm-up, alternating order%n", scanRounds);
    String big = NS + ".big";
    String deleted = NS + ".deleted";
    String rewritten = NS + ".rewritten";
    for (String t : List.of(deleted, rewritten)) {
      sql("CREATE TABLE " + OURS + "." + t + " AS SELECT * FROM " + OURS + "." + big);
      sql("UPDATE " + OURS + "." + t + " SET name = concat(name, 'u') WHERE id % 1000 = 7");
    }
    try (io.lancerest.client.LanceRestClient rest = io.lancerest.client.LanceRestClient.create(
            Map.of("uri", serverUri));
        org.apache.arrow.memory.RootAllocator a = new org.apache.arrow.memory.RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(rest.describeTable(
            new io.lancerest.client.model.DescribeTableRequest().id(List.of(NS, "rewritten")))
            .getLocation(), a)) {
      ds.compact(org.lance.compaction.CompactionOptions.builder().withMaterializeDeletions(true)
          .withMaterializeDeletionsThreshold(0.0f).build());
    }
    String where = "WHERE id % 3 = 0";
    String noPush = "peer_nopush";
    spark.read().option("pushDownFilters", "false").table(PEER + "." + deleted)
        .createOrReplaceTempView(noPush + "_deleted");
    spark.read().option("pushDownFilters", "false").table(PEER + "." + rewritten)
        .createOrReplaceTempView(noPush + "_rewritten");
    spark.read().option("pushDownFilters", "false").table(PEER + "." + big)
        .createOrReplaceTempView(noPush + "_big");

    System.out.println("   (d1) a table as written (no fragment lance-core scans slowly): the "
        + "guard's cost is one more manifest read per scan");
    Map<String, String> clean = new LinkedHashMap<>();
    clean.put(OURS, String.format(AGGREGATE, OURS + "." + big, where));
    clean.put(PEER, String.format(AGGREGATE, PEER + "." + big, where));
    clean.put(noPush, String.format(AGGREGATE, noPush + "_big", where));
    Map<String, List<Long>> t1 = interleaved(clean);
    printTimes(t1, "(d1)", 1.0);
    keep("(d1) (c) filtered", t1);
    for (String state : List.of("deleted", "rewritten")) {
      System.out.printf("   (d-%s) after the UPDATE%s (the peer's filtered scan of this table "
          + "never ends; compared with it unfiltered)%n", state,
          state.equals("rewritten") ? " and a compaction" : "");
      Map<String, String> q = new LinkedHashMap<>();
      q.put(OURS, String.format(AGGREGATE, OURS + "." + NS + "." + state, where));
      q.put(noPush, String.format(AGGREGATE, noPush + "_" + state, where));
      Map<String, List<Long>> t = interleaved(q);
      for (var e : t.entrySet()) {
        System.out.printf("   %-12s best %8.1f ms   median %8.1f ms%n", e.getKey(),
            best(e.getValue()) / 1e6, median(e.getValue()) / 1e6);
      }
      System.out.printf("   (d-%s) ours / peer without push-down: median %.3f; ours on this "
          + "table / ours on the table as written: median %.3f%n", state,
          median(t.get(OURS)) / median(t.get(noPush)), median(t.get(OURS))
          / median(t1.get(OURS)));
    }
    // the guard's planning cost alone: classifying the fragments from the manifest
    var table = (org.lance.spark.LanceDataset) ((org.apache.spark.sql.connector.catalog
        .TableCatalog) spark.sessionState().catalogManager().catalog(OURS)).loadTable(
        Identifier.of(new String[] {NS}, "deleted"));
    int n = 50;
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      io.lancerest.spark.connector.read.TableFragments.read(table.readOptions());
    }
    System.out.printf("   the guard's classification (one manifest read): %.1f ms per scan, "
        + "mean of %d%n", (System.nanoTime() - t0) / 1e6 / n, n);
  }

  // ---------------------------------------------------------------- output

  /** Keeps the medians of ours and the peer (nanoseconds) under {@code label} for the chart. */
  private void keep(String label, Map<String, List<Long>> times) {
    medians.put(label, new double[] {median(times.get(OURS)) / 1e6,
        median(times.get(PEER)) / 1e6});
  }

  private static String millions(long n) {
    return n % 1_000_000 == 0 ? n / 1_000_000 + "M" : String.format("%,d", n);
  }

  /** A bar per catalog and statement: median latency, log scale (30 ms next to 3 s). */
  private void chart(Charts charts) {
    if (medians.isEmpty() || !charts.on()) {
      return;
    }
    List<String> labels = new ArrayList<>();
    List<Double> ours = new ArrayList<>();
    List<Double> peer = new ArrayList<>();
    double min = Double.MAX_VALUE;
    double max = 0;
    for (var e : medians.entrySet()) {
      labels.add(String.format("%s: %.2f×", e.getKey(), e.getValue()[0] / e.getValue()[1]));
      ours.add(e.getValue()[0]);
      peer.add(e.getValue()[1]);
      min = Math.min(min, Math.min(e.getValue()[0], e.getValue()[1]));
      max = Math.max(max, Math.max(e.getValue()[0], e.getValue()[1]));
    }
    var c = Charts.bars("statement: ours / peer", "median latency (ms), log scale");
    c.getStyler().setYAxisLogarithmic(true);
    c.getStyler().setYAxisDecimalPattern("#,##0");
    c.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(min)) - 0.3));
    c.getStyler().setYAxisMax(max * 2);
    c.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideS);
    c.addSeries("ours: LanceRestCatalog", labels, ours);
    c.addSeries("peer: lance-spark LanceNamespaceSparkCatalog (impl=rest)", labels, peer);
    charts.tryWrite("catalog-latency", c, "Catalog statement latency: ours against lance-spark's "
        + "catalog", String.format("CatalogBenchmark parts=%s rows=%d; (a) median of %d x %d "
        + "statements, (c), (d1) median of %d rounds", parts, rows, rounds, queries, scanRounds));
  }

  private static void printTimes(Map<String, List<Long>> times, String label, double target) {
    for (var e : times.entrySet()) {
      System.out.printf("   %-8s best %8.1f ms   median %8.1f ms   rounds %s%n", e.getKey(),
          best(e.getValue()) / 1e6, median(e.getValue()) / 1e6,
          e.getValue().stream().map(v -> String.format("%.0f", v / 1e6)).toList());
    }
    double bestRatio = (double) best(times.get(OURS)) / best(times.get(PEER));
    double medianRatio = median(times.get(OURS)) / median(times.get(PEER));
    System.out.printf("RESULT catalog%s ours/peer median %.3f target %.2f%n", label,
        medianRatio, target);
    System.out.printf("   %s ratio ours/peer: best %.3f, median %.3f (target <= %.2f): %s%n",
        label, bestRatio, medianRatio, target,
        medianRatio <= target && bestRatio <= target ? "MET" : "MISSED");
  }

  private static long best(List<Long> v) {
    return v.stream().mapToLong(Long::longValue).min().orElseThrow();
  }

  private static double median(List<Long> v) {
    long[] s = v.stream().mapToLong(Long::longValue).sorted().toArray();
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
  }

  private void sql(String statement) {
    spark.sql(statement).collectAsList();
  }

  private static String loadAverage() {
    try {
      return String.join(" ", Arrays.asList(Files.readString(Path.of("/proc/loadavg")).trim()
          .split(" ")).subList(0, 3)) + " (" + Runtime.getRuntime().availableProcessors()
          + " cores)";
    } catch (Exception e) {
      return "unknown";
    }
  }

  private static void reset(Path dir) throws Exception {
    io.lancerest.examples.Warehouses.reset(dir);
  }
}
