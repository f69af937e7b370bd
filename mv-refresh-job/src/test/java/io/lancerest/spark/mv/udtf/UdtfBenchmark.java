package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.ErrorHandling;
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

/**
 * Benchmark (not a test): 16 partitions of a CPU-bound UDTF, refreshed on local[1] and on
 * local[2] (each in its own JVM), and on local[2] the same function written by hand as {@code
 * groupByKey(...).flatMapGroups(...)} plus a lance-spark write, alternating with the UDTF runs.
 * Each figure is the best of two runs after the JVM's first. Run (from the repository root):
 *
 * <pre>
 * mvn -o -q install -DskipTests
 * mvn -o -q -pl mv-refresh-job test-compile exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.lancerest.spark.mv.udtf.UdtfBenchmark [-Dexec.args="ROWS_PER_KEY ITERATIONS"]
 * </pre>
 */
public final class UdtfBenchmark {
  static final int KEYS = 16;
  static final StructType INPUT = new StructType()
      .add("k", DataTypes.IntegerType, false)
      .add("x", DataTypes.DoubleType, false);
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
          Boolean.parseBoolean(args[5]));
      return;
    }
    int rowsPerKey = args.length > 0 ? Integer.parseInt(args[0]) : 500;
    int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 100000;
    Path dir = Files.createTempDirectory("udtf-bench");
    System.out.printf("UDTF benchmark: %d partitions x %d rows, %d sin() per row, data in %s%n",
        KEYS, rowsPerKey, iterations, dir);
    Map<String, Long> one = spawn("local[1]", dir, rowsPerKey, iterations, false);
    Map<String, Long> two = spawn("local[2]", dir, rowsPerKey, iterations, true);
    long u1 = one.get("udtf_ms");
    long u2 = two.get("udtf_ms");
    long g2 = two.get("groupby_ms");
    System.out.printf("UDTF refresh, local[1]:                               %6d ms"
        + "  (process CPU %d ms per run)%n", u1, one.get("udtf_cpu_ms"));
    System.out.printf("UDTF refresh, local[2]:                               %6d ms"
        + "  speedup %.2fx (target >= 1.7x)  (process CPU %d ms per run)%n", u2,
        (double) u1 / u2, two.get("udtf_cpu_ms"));
    System.out.printf("groupByKey.flatMapGroups + lance-spark write, local[2]: %6d ms"
        + "  UDTF/hand-written %.2fx (target <= 1.2x)  (process CPU %d ms per run)%n", g2,
        (double) u2 / g2, two.get("groupby_cpu_ms"));
    System.out.printf("load average at the end: %.1f on %d cores%n",
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        Runtime.getRuntime().availableProcessors());
  }

  private static Map<String, Long> spawn(String master, Path dir, int rowsPerKey,
      int iterations, boolean groupBy) throws Exception {
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
    cmd.addAll(List.of("child", master, dir.toString(), Integer.toString(rowsPerKey),
        Integer.toString(iterations), Boolean.toString(groupBy)));
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
      boolean groupBy) {
    SparkSession spark = SparkSession.builder().master(master).appName("udtf-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", Integer.toString(KEYS))
        // Tiny shuffles would otherwise be coalesced into one task, hiding the parallelism.
        .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
        .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    org.apache.logging.log4j.core.config.Configurator.setLevel("io.lancerest.spark.mv.udtf",
        org.apache.logging.log4j.Level.INFO);
    String source = dir.resolve("source.lance").toString();
    if (!new File(source).exists()) {
      List<Row> rows = new ArrayList<>();
      for (int k = 0; k < KEYS; k++) {
        for (int i = 0; i < rowsPerKey; i++) {
          rows.add(RowFactory.create(k, k + i / (double) rowsPerKey));
        }
      }
      spark.createDataFrame(rows, INPUT).repartition(4).write().format("lance").save(source);
    }
    String viewUri = dir.resolve("view-" + master.replaceAll("\\W", "") + ".lance").toString();
    UdtfFixtures.createView(viewUri, OUTPUT);
    UdtfDefinition def = UdtfDefinition.of("summary", "1", SummaryUdtf.class,
            UdtfFixtures.arrow(OUTPUT))
        .withPartitionBy("k")
        .withOptions(Map.of("iterations", Integer.toString(iterations)))
        .withErrorHandling(ErrorHandling.FAIL);
    UdtfSource src = UdtfSource.lanceTable(source, UdtfFixtures.latestVersion(source));
    UdtfView view = new UdtfView("bench.summary", viewUri, Map.of());
    UdtfRefreshOptions opts = UdtfRefreshOptions.DEFAULT.withForce(true).withConcurrency(KEYS);
    // Runs alternate between the two forms so that a change in machine load hits both alike;
    // the first round warms the JVM up and is not counted.
    ExpressionEncoder<Row> enc = ExpressionEncoder.apply(RowEncoder.encoderFor(OUTPUT));
    long udtf = Long.MAX_VALUE;
    long hand = Long.MAX_VALUE;
    long udtfCpu = 0;
    long handCpu = 0;
    var os = (com.sun.management.OperatingSystemMXBean)
        java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    for (int run = 0; run < 3; run++) {
      long t0 = System.nanoTime();
      long c0 = os.getProcessCpuTime();
      UdtfRefreshResult r = UdtfRefresh.run(spark, src, view, def, opts);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      udtfCpu += run == 0 ? 0 : (os.getProcessCpuTime() - c0) / 2_000_000;
      if (r.rowsInserted() != KEYS) {
        throw new IllegalStateException("expected " + KEYS + " rows, got " + r);
      }
      udtf = run == 0 ? udtf : Math.min(udtf, ms);
      if (groupBy) {
        t0 = System.nanoTime();
        c0 = os.getProcessCpuTime();
        Dataset<Row> in = spark.read().format("lance").option("path", source).load();
        Dataset<Row> result = in
            .groupByKey((MapFunction<Row, Integer>) row -> row.getInt(0), Encoders.INT())
            .flatMapGroups((FlatMapGroupsFunction<Integer, Row, Row>) (k, rows) ->
                List.of(summarize(k, rows, iterations)).iterator(), enc);
        result.write().format("lance").save(dir.resolve("hand-" + master.replaceAll("\\W", "")
            + "-" + run + ".lance").toString());
        ms = (System.nanoTime() - t0) / 1_000_000;
        handCpu += run == 0 ? 0 : (os.getProcessCpuTime() - c0) / 2_000_000;
        hand = run == 0 ? hand : Math.min(hand, ms);
      }
    }
    StringBuilder out = new StringBuilder("RESULT udtf_ms=" + udtf + " udtf_cpu_ms=" + udtfCpu);
    if (groupBy) {
      out.append(" groupby_ms=").append(hand).append(" groupby_cpu_ms=").append(handCpu);
    }
    System.out.println(out);
    spark.stop();
  }
}
