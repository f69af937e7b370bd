package io.lancerest.examples.bench;

import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.engine.DefaultMaterializedViewsFactory;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapGroupsFunction;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder;
import org.apache.spark.sql.catalyst.encoders.RowEncoder;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.lance.namespace.RestAdapter;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * Benchmark (not a test): 16 partitions of a CPU-bound UDTF view refreshed through the catalog
 * (a RestAdapter dir server, LanceRestCatalog, the default MV engine: REFRESH MATERIALIZED VIEW
 * ... WITH (force = true)), on local[1] and on local[2], each in its own JVM; and in the same
 * JVMs the same function written by hand as {@code groupByKey(...).flatMapGroups(...)} over the
 * same catalog table, written through the catalog ({@code writeTo(...).create()}). Both read the
 * same rows and write the same 16 output rows. One warm-up round of each, then {@code rounds}
 * rounds alternating which of the two goes first; every figure is a median. Run (repository
 * root):
 *
 * <pre>
 * mvn -B -ntp -q -Pquickstart -DskipTests -pl examples -am verify \
 *   -Dquickstart.main=io.lancerest.examples.bench.UdtfBenchmark \
 *   [-Dquickstart.args="rows=500 sin=50000 rounds=3"]
 * </pre>
 *
 * <p>{@code rows} per partition key, {@code sin} calls per row (the CPU cost), {@code rounds}
 * measured rounds per JVM.
 *
 * <p>{@code sweep=1,2,4,8,16} adds to the local[2] JVM, after its rounds, refresh time against
 * the size of the change: for each count k, {@code sweep-rounds} times (3 by default), one row
 * inserted into each of k partitions, a timed REFRESH, then a timed {@code REFRESH … WITH (force
 * = true)} of the same source version; and writes the chart {@code refresh-udtf.png} ({@code
 * charts=DIR|none}, see {@link Charts}).
 */
public final class UdtfBenchmark {
  static final int KEYS = 16;
  static final String NS = "lance.bench";
  static final StructType OUTPUT = new StructType()
      .add("k", DataTypes.IntegerType, false)
      .add("n", DataTypes.LongType, false)
      .add("acc", DataTypes.DoubleType, false);

  private UdtfBenchmark() {}

  /** The CPU-bound function both paths run: per key, a trigonometric fold over its rows. */
  static Row summarize(int key, Iterator<Row> rows, int iterations) {
    long n = 0;
    double acc = 0;
    while (rows.hasNext()) {
      double x = rows.next().getDouble(1);
      for (int i = 0; i < iterations; i++) {
        acc = acc * 0.999999 + Math.sin(x + i);
      }
      n++;
    }
    return RowFactory.create(key, n, acc);
  }

  /** The UDTF form. */
  public static final class SummaryUdtf implements BatchUdtf {
    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      int iterations = Integer.parseInt(ctx.option("iterations", "1000"));
      return List.of(summarize((Integer) ctx.partitionKey(), rows, iterations)).iterator();
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("child")) {
      child(args[1], Path.of(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
          Integer.parseInt(args[5]), args.length > 6 ? args[6] : "", args.length > 7
              ? Integer.parseInt(args[7]) : 0);
      return;
    }
    Map<String, String> opts = ViewBench.args(args);
    int rowsPerKey = Integer.parseInt(opts.getOrDefault("rows", "500"));
    int iterations = Integer.parseInt(opts.getOrDefault("sin", "50000"));
    int rounds = Integer.parseInt(opts.getOrDefault("rounds", "3"));
    Charts charts = Charts.of(opts);
    String sweep = opts.getOrDefault("sweep", "");
    int sweepRounds = Integer.parseInt(opts.getOrDefault("sweep-rounds", "3"));
    Path dir = Files.createTempDirectory("udtf-bench");
    System.out.printf("UDTF benchmark: %d partitions x %d rows, %d sin() per row, %d rounds "
        + "(medians), data in %s%n", KEYS, rowsPerKey, iterations, rounds, dir);
    Map<String, Long> one;
    Map<String, Long> two;
    List<ViewBench.SweepPoint> points = new ArrayList<>();
    try {
      one = spawn(List.of("local[1]", dir.resolve("one").toString()), rowsPerKey, iterations,
          rounds, new ArrayList<>());
      two = spawn(sweep.isEmpty() ? List.of("local[2]", dir.resolve("two").toString())
          : List.of("local[2]", dir.resolve("two").toString(), sweep,
              Integer.toString(sweepRounds)), rowsPerKey, iterations, rounds, points);
    } finally {
      io.lancerest.examples.Warehouses.delete(dir);
    }
    long u1 = one.get("udtf_ms");
    long u2 = two.get("udtf_ms");
    long g1 = one.get("groupby_ms");
    long g2 = two.get("groupby_ms");
    System.out.printf("UDTF view refresh, local[1]:        %6d ms (process CPU %d ms)%n", u1,
        one.get("udtf_cpu_ms"));
    System.out.printf("UDTF view refresh, local[2]:        %6d ms (process CPU %d ms)  "
        + "speedup %.2fx (target >= 1.7x)%n", u2, two.get("udtf_cpu_ms"), (double) u1 / u2);
    System.out.printf("groupByKey.flatMapGroups, local[1]: %6d ms (process CPU %d ms)%n", g1,
        one.get("groupby_cpu_ms"));
    System.out.printf("groupByKey.flatMapGroups, local[2]: %6d ms (process CPU %d ms)  "
        + "speedup %.2fx (the peer's, for reference)%n", g2, two.get("groupby_cpu_ms"),
        (double) g1 / g2);
    System.out.printf("UDTF / hand-written: local[2] %.2fx (target <= 1.2x), local[1] %.2fx;"
        + " median of the per-round ratios: local[2] %.2fx, local[1] %.2fx%n",
        (double) u2 / g2, (double) u1 / g1, two.get("paired_ratio_permille") / 1000.0,
        one.get("paired_ratio_permille") / 1000.0);
    System.out.printf("load average at the end: %.1f on %d cores%n",
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        Runtime.getRuntime().availableProcessors());
    charts.refreshBySize("refresh-udtf", "UDTF view: refresh time against the size of the change",
        "partitions with a new row (of " + KEYS + "), log scale", true, points, String.format(
        "UdtfBenchmark rows=%d sin=%d, local[2], median of %d per size; any row change "
        + "recomputes every partition", rowsPerKey, iterations, sweepRounds));
  }

  /**
   * Runs the child JVM for {@code child} = (master, folder[, sweep, sweep rounds]); returns its
   * RESULT figures and adds its SWEEP points to {@code points}.
   */
  private static Map<String, Long> spawn(List<String> child, int rowsPerKey, int iterations,
      int rounds, List<ViewBench.SweepPoint> points) throws Exception {
    String master = child.get(0);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx2g");
    for (String pkg : List.of("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io",
        "java.net", "java.nio", "java.util", "java.util.concurrent",
        "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs", "sun.security.action",
        "sun.util.calendar")) {
      cmd.add("--add-opens=java.base/" + pkg + "=ALL-UNNAMED");
    }
    cmd.add("-Djdk.reflect.useDirectMethodHandle=false");
    cmd.add("-cp");
    cmd.add(classpath());
    cmd.add(UdtfBenchmark.class.getName());
    cmd.addAll(List.of("child", master, child.get(1), Integer.toString(rowsPerKey),
        Integer.toString(iterations), Integer.toString(rounds)));
    cmd.addAll(child.subList(2, child.size()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    Map<String, Long> result = new LinkedHashMap<>();
    java.util.ArrayDeque<String> tail = new java.util.ArrayDeque<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
      String line;
      while ((line = r.readLine()) != null) {
        tail.addLast(line);
        if (tail.size() > 40) {
          tail.removeFirst();
        }
        if (line.startsWith("round ") || line.startsWith("  sweep round ")) {
          System.out.println("  " + master + " " + line.trim());
        }
        if (line.startsWith("SWEEP ")) {
          String[] w = line.split(" ");
          points.add(new ViewBench.SweepPoint(Double.parseDouble(w[1]),
              Double.parseDouble(w[2]), Double.parseDouble(w[3])));
        }
        if (line.startsWith("RESULT ")) {
          for (String kv : line.substring(7).trim().split(" ")) {
            String[] parts = kv.split("=");
            result.put(parts[0], Long.parseLong(parts[1]));
          }
        }
      }
    }
    if (p.waitFor() != 0 || result.isEmpty()) {
      tail.forEach(System.err::println);
      throw new IllegalStateException("benchmark JVM for " + master + " failed (exit "
          + p.exitValue() + ")");
    }
    return result;
  }

  /** The project classpath, also under exec:java (whose java.class.path is Maven's). */
  private static String classpath() {
    List<String> parts = new ArrayList<>();
    ClassLoader cl = Thread.currentThread().getContextClassLoader();
    if (cl instanceof URLClassLoader u) {
      for (URL url : u.getURLs()) {
        parts.add(new File(url.getPath()).getPath());
      }
    }
    parts.add(System.getProperty("java.class.path"));
    return String.join(File.pathSeparator, parts);
  }

  private static void child(String master, Path dir, int rowsPerKey, int iterations,
      int rounds, String sweep, int sweepRounds) throws Exception {
    Files.createDirectories(dir);
    try (RestAdapter server = new RestAdapter("dir", Map.of("root", dir.toString()),
        "127.0.0.1", 0)) {
      server.start();
      SparkSession spark = SparkSession.builder().master(master).appName("udtf-bench")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", Integer.toString(KEYS))
          // Tiny shuffles would otherwise be coalesced into one task, hiding the parallelism.
          .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
          .config("spark.sql.catalog.lance", "io.lancerest.spark.catalog.LanceRestCatalog")
          .config("spark.sql.catalog.lance.uri", "http://127.0.0.1:" + server.getPort())
          .config(MaterializedViews.FACTORY_CONF, DefaultMaterializedViewsFactory.class.getName())
          .withExtensions(new LanceRestSparkExtensions())
          .withExtensions(new LanceSparkSessionExtensions())
          .getOrCreate();
      spark.sparkContext().setLogLevel("WARN");
      org.apache.logging.log4j.core.config.Configurator.setLevel("io.lancerest.spark.mv.udtf",
          org.apache.logging.log4j.Level.INFO);
      measure(spark, rowsPerKey, iterations, rounds);
      List<Double> sizes = ViewBench.sizes(Map.of("sweep", sweep), "sweep");
      if (!sizes.isEmpty()) {
        // one new row in each of the first k partitions, a value inside each key's range
        for (ViewBench.SweepPoint p : ViewBench.sweep(spark, NS + ".summary", sizes, sweepRounds,
            (k, step) -> {
              spark.sql("INSERT INTO " + NS + ".source SELECT CAST(id AS INT), id + 0.5 FROM "
                  + "range(0, " + Math.round(k) + ")");
              return k;
            })) {
          System.out.println("SWEEP " + p.size() + " " + p.incremental() + " " + p.full());
        }
      }
      spark.stop();
    }
  }

  private static void measure(SparkSession spark, int rowsPerKey, int iterations, int rounds) {
    spark.sql("CREATE NAMESPACE " + NS);
    String src = NS + ".source";
    spark.sql("CREATE TABLE " + src + " (k INT, x DOUBLE)");
    // Four fragments, keys interleaved, so every task reads from all of them.
    spark.sql("INSERT INTO " + src + " SELECT CAST(id % " + KEYS + " AS INT), (id % " + KEYS
        + ") + (id / " + KEYS + ") / " + rowsPerKey + ".0 FROM range(0, " + (KEYS * rowsPerKey)
        + ", 1, 4)");
    String view = NS + ".summary";
    spark.sql("CREATE MATERIALIZED VIEW " + view + " USING UDTF '" + SummaryUdtf.class.getName()
        + "' PARTITION BY k OPTIONS (output_schema = 'k INT NOT NULL, n BIGINT NOT NULL, acc "
        + "DOUBLE NOT NULL', iterations = '" + iterations + "') AS SELECT k, x FROM " + src);
    ExpressionEncoder<Row> enc = ExpressionEncoder.apply(RowEncoder.encoderFor(OUTPUT));
    var os = (com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    List<Long> udtf = new ArrayList<>();
    List<Long> hand = new ArrayList<>();
    List<Long> udtfCpu = new ArrayList<>();
    List<Long> handCpu = new ArrayList<>();
    // Round 0 warms both up (JIT, code generation, lance-core) and is not counted; then the
    // two alternate which goes first, so a change in machine load hits both alike.
    for (int round = 0; round <= rounds; round++) {
      for (int turn = 0; turn < 2; turn++) {
        boolean udtfTurn = (turn == 0) == (round % 2 == 0);
        long t0 = System.nanoTime();
        long c0 = os.getProcessCpuTime();
        List<Row> out;
        if (udtfTurn) {
          spark.sql("REFRESH MATERIALIZED VIEW " + view + " WITH (force = true)").collectAsList();
          out = spark.table(view).collectAsList();
        } else {
          Dataset<Row> in = spark.table(src);
          Dataset<Row> result = in
              .groupByKey((MapFunction<Row, Integer>) row -> row.getInt(0), Encoders.INT())
              .flatMapGroups((FlatMapGroupsFunction<Integer, Row, Row>) (k, rows) ->
                  List.of(summarize(k, rows, iterations)).iterator(), enc);
          String table = NS + ".hand_" + round;
          result.writeTo(table).create();
          out = spark.table(table).collectAsList();
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        long cpu = (os.getProcessCpuTime() - c0) / 1_000_000;
        if (out.size() != KEYS) {
          throw new IllegalStateException((udtfTurn ? "view" : "hand-written table")
              + " has " + out.size() + " rows, expected " + KEYS);
        }
        if (round > 0) {
          (udtfTurn ? udtf : hand).add(ms);
          (udtfTurn ? udtfCpu : handCpu).add(cpu);
        }
        System.out.printf("round %d %s: %d ms%n", round, udtfTurn ? "udtf" : "hand", ms);
      }
    }
    // The two runs of a round are back to back, so their ratio is the figure least moved by
    // load that changes over minutes; its median is printed next to the ratio of medians.
    List<Long> ratios = new ArrayList<>();
    for (int i = 0; i < udtf.size(); i++) {
      ratios.add(udtf.get(i) * 1000 / Math.max(1, hand.get(i)));
    }
    System.out.println("RESULT udtf_ms=" + median(udtf) + " udtf_cpu_ms=" + median(udtfCpu)
        + " groupby_ms=" + median(hand) + " groupby_cpu_ms=" + median(handCpu)
        + " paired_ratio_permille=" + median(ratios));
  }

  private static long median(List<Long> xs) {
    List<Long> s = new ArrayList<>(xs);
    s.sort(null);
    return s.get(s.size() / 2);
  }
}
