package io.lancerest.examples.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Whether a query view's refresh cost follows the size of the change, not of the table: the same
 * 50,000-row change (45,000 rows appended, 5,000 updated) on sources of different sizes, in one
 * JVM over an in-process {@code RestAdapter("dir")} server. Not a test: it prints figures.
 *
 * <p>Per size: a full refresh against {@code CREATE TABLE … AS SELECT} of the same projection
 * (rounds alternate who goes first; target full / CTAS &le; 1.05), then incremental refreshes
 * after the change, its 5,000 updated rows either one contiguous id range ({@code contiguous})
 * or spread over every fragment ({@code scattered}: {@code id % (rows / 5000) = r}); target:
 * incremental at the largest size &le; 1.5 × at the smallest. It also prints the driver's peak
 * heap (target: within {@code -Xmx4g}: the run completes, and what it holds is printed).
 *
 * <p>Arguments, all optional: {@code sizes=5000000,50000000 rounds=3 patterns=contiguous,scattered
 * warehouse=DIR log=WARN}.
 */
public final class QueryScaleBenchmark {
  private static final String NS = "lance.scale";
  private static final String PROJECTION = "SELECT id, upper(name) AS uname, score * 2 AS s2, "
      + "payload FROM %s WHERE score %% 10 <> 0";
  private static final long APPENDED = 45_000;
  private static final long UPDATED = 5_000;

  private QueryScaleBenchmark() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    List<Long> sizes = new ArrayList<>();
    for (String s : args.getOrDefault("sizes", "5000000,50000000").split(",")) {
      sizes.add(Long.parseLong(s.trim()));
    }
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "3"));
    List<String> patterns = List.of(args.getOrDefault("patterns", "contiguous,scattered")
        .split(","));
    Map<String, double[]> results = new LinkedHashMap<>();
    HeapSampler heap = new HeapSampler();
    try (ViewBench b = ViewBench.start("qv-scale", args)) {
      b.spark.sql("CREATE NAMESPACE " + NS);
      warmUp(b.spark);
      for (long rows : sizes) {
        results.put(String.valueOf(rows), size(b.spark, rows, rounds, patterns));
      }
    }
    System.out.printf("%n== summary (%s)%n", ViewBench.loadAverage());
    System.out.printf("%-12s %10s %10s %8s", "rows", "CTAS s", "full s", "full/CTAS");
    for (String p : patterns) {
      System.out.printf(" %14s", p + " inc s");
    }
    System.out.println();
    for (var e : results.entrySet()) {
      double[] r = e.getValue();
      System.out.printf("%,-12d %10.2f %10.2f %8.3f", Long.parseLong(e.getKey()), r[0], r[1],
          r[1] / r[0]);
      for (int i = 0; i < patterns.size(); i++) {
        System.out.printf(" %14.3f", r[2 + i]);
      }
      System.out.println();
      System.out.printf("RESULT scale rows=%s full/CTAS %.3f target 1.05%n", e.getKey(),
          r[1] / r[0]);
    }
    if (results.size() >= 2) {
      double[] small = results.values().iterator().next();
      double[] large = new ArrayList<>(results.values()).get(results.size() - 1);
      for (int i = 0; i < patterns.size(); i++) {
        System.out.printf("RESULT scale %s incremental largest/smallest %.3f target 1.50%n",
            patterns.get(i), large[2 + i] / small[2 + i]);
      }
    }
    System.out.printf("RESULT scale driver heap: at most %.0f MiB in use (sampled every 100 ms, "
        + "garbage included), %.0f MiB live after the last old-generation collection, of "
        + "-Xmx %.0f MiB%n", heap.max() / 1048576.0, liveAfterGc() / 1048576.0,
        Runtime.getRuntime().maxMemory() / 1048576.0);
  }

  /** The most heap in use seen by a sampling thread. */
  private static final class HeapSampler {
    private volatile long max;

    HeapSampler() {
      Thread t = new Thread(() -> {
        while (true) {
          Runtime r = Runtime.getRuntime();
          max = Math.max(max, r.totalMemory() - r.freeMemory());
          try {
            Thread.sleep(100);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "heap-sampler");
      t.setDaemon(true);
      t.start();
    }

    long max() {
      return max;
    }
  }

  /** JIT, Spark code generation and lance-core start-up, on a small table. */
  private static void warmUp(SparkSession spark) {
    String src = NS + ".warm_src";
    spark.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT, payload DOUBLE)");
    insert(spark, src, 0, 200_000);
    spark.sql("CREATE TABLE " + NS + ".warm_ctas AS " + String.format(PROJECTION, src));
    spark.sql("CREATE MATERIALIZED VIEW " + NS + ".warm_view AS " + String.format(PROJECTION,
        src));
    insert(spark, src, 200_000, 2_000);
    spark.sql("UPDATE " + src + " SET score = score + 1 WHERE id % 1000 = 3");
    spark.sql("REFRESH MATERIALIZED VIEW " + NS + ".warm_view").collectAsList();
    for (String t : List.of("warm_ctas", "warm_src")) {
      spark.sql("DROP TABLE " + NS + "." + t + " PURGE");
    }
    spark.sql("DROP MATERIALIZED VIEW " + NS + ".warm_view");
  }

  /** {CTAS s, full s, incremental s per pattern} for a source of {@code rows} rows. */
  private static double[] size(SparkSession spark, long rows, int rounds, List<String> patterns) {
    String src = NS + ".src_" + rows;
    spark.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT, payload DOUBLE)");
    long t0 = System.nanoTime();
    for (long from = 0; from < rows; from += 10_000_000) {
      insert(spark, src, from, Math.min(10_000_000, rows - from));
    }
    System.out.printf("%n== %,d rows: source loaded in %.1f s (%s)%n", rows, ViewBench.secs(t0),
        ViewBench.loadAverage());
    String select = String.format(PROJECTION, src);
    List<Double> ctas = new ArrayList<>();
    List<Double> full = new ArrayList<>();
    String view = null;
    for (int r = 0; r < rounds; r++) {
      String c = NS + ".c_" + rows + "_" + r;
      String v = NS + ".v_" + rows + "_" + r;
      if (r % 2 == 0) {
        ctas.add(timeCtas(spark, select, c));
        full.add(timeFull(spark, select, v));
      } else {
        full.add(timeFull(spark, select, v));
        ctas.add(timeCtas(spark, select, c));
      }
      System.out.printf("  round %d: CTAS %.2f s, full refresh %.2f s%n", r, ctas.get(r),
          full.get(r));
      spark.sql("DROP TABLE " + c + " PURGE");
      if (view != null) {
        spark.sql("DROP MATERIALIZED VIEW " + view);
      }
      view = v;
    }
    double[] out = new double[2 + patterns.size()];
    out[0] = ViewBench.median(ctas);
    out[1] = ViewBench.median(full);
    System.out.printf("  full / CTAS = %.2f / %.2f s = %.3f%n", out[1], out[0], out[1] / out[0]);
    long next = rows;
    int round = 0;
    for (int p = 0; p < patterns.size(); p++) {
      boolean scattered = patterns.get(p).trim().equals("scattered");
      List<Double> inc = new ArrayList<>();
      for (int r = 0; r <= rounds; r++) { // round 0 is a warm-up
        insert(spark, src, next, APPENDED);
        next += APPENDED;
        round++;
        String where = scattered ? "id % " + (rows / UPDATED) + " = " + (round * 7 % (rows
            / UPDATED)) : "id >= " + (round * UPDATED) + " AND id < " + ((round + 1) * UPDATED);
        spark.sql("UPDATE " + src + " SET payload = payload + 1, score = score + 1 WHERE "
            + where);
        long t = System.nanoTime();
        Row res = spark.sql("REFRESH MATERIALIZED VIEW " + view).collectAsList().get(0);
        double s = ViewBench.secs(t);
        System.out.printf("  %s %s: %.3f s (job %.3f s), %s inserted, %s deleted%n",
            patterns.get(p), r == 0 ? "warm-up" : "round " + r, s, res.getLong(7) / 1e3,
            res.get(4), res.get(5));
        ViewBench.sameRows(spark, patterns.get(p) + " round " + r, "SELECT id, uname, s2, "
            + "payload FROM " + view, select);
        if (r > 0) {
          inc.add(s);
        }
      }
      out[2 + p] = ViewBench.median(inc);
    }
    long diff = spark.sql("SELECT id, uname, s2, payload FROM " + view).exceptAll(
        spark.sql(select)).count() + spark.sql(select).exceptAll(spark.sql(
        "SELECT id, uname, s2, payload FROM " + view)).count();
    System.out.printf("  check: rows differing between the view and the SELECT: %,d%n", diff);
    spark.sql("DROP MATERIALIZED VIEW " + view);
    spark.sql("DROP TABLE " + src + " PURGE");
    return out;
  }

  private static void insert(SparkSession spark, String table, long from, long n) {
    spark.sql("INSERT INTO " + table + " SELECT id, concat('name-', id), CAST(id % 97 AS INT), "
        + "id * 0.5 FROM range(" + from + ", " + (from + n) + ")");
  }

  private static double timeCtas(SparkSession spark, String select, String name) {
    long t = System.nanoTime();
    spark.sql("CREATE TABLE " + name + " AS " + select);
    return ViewBench.secs(t);
  }

  private static double timeFull(SparkSession spark, String select, String name) {
    spark.sql("CREATE MATERIALIZED VIEW " + name + " AS " + select + " WITH NO DATA");
    long t = System.nanoTime();
    spark.sql("REFRESH MATERIALIZED VIEW " + name).collectAsList();
    return ViewBench.secs(t);
  }

  /** Heap in use right after the last collection of each pool that has one (the live set). */
  private static long liveAfterGc() {
    long live = 0;
    for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
      if (p.getType() == MemoryType.HEAP && p.getCollectionUsage() != null) {
        live += p.getCollectionUsage().getUsed();
      }
    }
    return live;
  }



}
