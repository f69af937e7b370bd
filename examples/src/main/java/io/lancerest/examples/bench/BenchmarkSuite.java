package io.lancerest.examples.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every benchmark with a target, one after another, each in a JVM of its own (so none inherits
 * another's JIT state, caches or heap), with one summary at the end: each {@code RESULT} line
 * the benchmarks print, the ratio against its target. Not a test.
 *
 * <p>Arguments, all optional: {@code only=catalog,query,scattered,scale,chunker,joblog} (which to
 * run, default all), {@code scale-sizes=5000000,50000000} and {@code charts=DIR} (the benchmarks'
 * charts; by default none, so the suite's shorter runs do not replace docs/img). Each benchmark's
 * own output goes to standard output as it runs.
 */
public final class BenchmarkSuite {
  private BenchmarkSuite() {}

  private record Bench(String name, Class<?> main, List<String> args) {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = new LinkedHashMap<>();
    for (String a : argv) {
      int eq = a.indexOf('=');
      args.put(a.substring(0, eq), a.substring(eq + 1));
    }
    List<Bench> all = List.of(
        new Bench("catalog", CatalogBenchmark.class, List.of("parts=cd")),
        new Bench("query", QueryViewBenchmark.class, List.of("rows=5000000", "rounds=5")),
        new Bench("scattered", QueryViewBenchmark.class, List.of("rows=5000000", "rounds=5",
            "pattern=scattered")),
        new Bench("scale", QueryScaleBenchmark.class, List.of("sizes="
            + args.getOrDefault("scale-sizes", "5000000,50000000"))),
        new Bench("chunker", ChunkerViewBenchmark.class, List.of()),
        new Bench("aggregate", AggregateViewBenchmark.class, List.of("rows=5000000",
            "groups=1000", "rounds=5")),
        new Bench("joblog", JobLogBenchmark.class, List.of()));
    List<String> only = List.of(args.getOrDefault("only",
        "catalog,query,scattered,scale,chunker,aggregate,joblog").split(","));
    String charts = "charts=" + args.getOrDefault("charts", "none");
    List<String> results = new ArrayList<>();
    for (Bench b : all) {
      if (!only.contains(b.name())) {
        continue;
      }
      System.out.printf("%n######## %s (%s)%n", b.name(), b.main().getSimpleName());
      long t0 = System.nanoTime();
      for (String r : run(b, charts)) {
        results.add(b.name() + ": " + r);
      }
      System.out.printf("######## %s done in %s%n", b.name(),
          Duration.ofNanos(System.nanoTime() - t0).toSeconds() + " s");
    }
    System.out.printf("%n======== summary (%s, %d cores)%n", ViewBench.loadAverage(),
        Runtime.getRuntime().availableProcessors());
    for (String r : results) {
      System.out.println("  " + r + verdict(r));
    }
  }

  /** " MET" / " MISSED" for lines ending in {@code <value> target <limit>}. */
  private static String verdict(String line) {
    String[] w = line.trim().split("\\s+");
    if (w.length >= 3 && w[w.length - 2].equals("target")) {
      try {
        double value = Double.parseDouble(w[w.length - 3]);
        double target = Double.parseDouble(w[w.length - 1]);
        return value <= target ? "  MET" : "  MISSED";
      } catch (NumberFormatException e) {
        return "";
      }
    }
    return "";
  }

  private static List<String> run(Bench b, String charts) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx4g");
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--add-opens") || a.startsWith("-Djdk.reflect")
          || a.startsWith("-Dio.netty")) {
        cmd.add(a);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(b.main().getName());
    cmd.addAll(b.args());
    cmd.add(charts);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    List<String> results = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        System.out.println(line);
        if (line.startsWith("RESULT ")) {
          results.add(line.substring(7));
        }
      }
    }
    int exit = p.waitFor();
    if (exit != 0) {
      results.add(b.main().getSimpleName() + " FAILED (exit " + exit + ")");
    }
    return results;
  }
}
