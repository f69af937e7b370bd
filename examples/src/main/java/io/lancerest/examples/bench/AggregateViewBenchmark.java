package io.lancerest.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Aggregate query views against their peers, in one JVM and one SparkSession over an in-process
 * {@code RestAdapter("dir")} server. Not a test: it prints figures and ratios.
 * <ul>
 *   <li>(a) a full refresh of {@code SELECT k, count(*), count(x), sum(x), min(x), max(x),
 *       avg(x) … GROUP BY k} over R source rows and G groups versus {@code CREATE TABLE … AS}
 *       the same SELECT through the catalog (target &le; 1.1); the two take turns going
 *       first;</li>
 *   <li>(b) an incremental refresh after appending 1 % new rows and updating 0.1 % of the rows,
 *       scattered over every fragment ({@code id % 1000 = r}), versus the full refresh (target
 *       &le; 5 %). After every round the view is checked against its SELECT (row count and a
 *       hash of every row, doubles rounded).</li>
 *   <li>(c) the same for a view without min and max ({@code count}, {@code sum}, {@code avg}):
 *       its groups never need their rows read again, so it shows what the rest of the
 *       incremental refresh costs. Its full refresh is timed in the rounds of (a), its
 *       incremental refresh right after the main view's, over the same change.</li>
 * </ul>
 * Arguments, all optional: {@code rows=5000000 groups=1000 rounds=5 warehouse=DIR}.
 */
public final class AggregateViewBenchmark {
  private static final String NS = "lance.bench";
  private static final String SELECT = "SELECT k, count(*) AS n, count(x) AS cx, sum(x) AS sx, "
      + "min(x) AS mn, max(x) AS mx, avg(x) AS ax FROM %s GROUP BY k";
  /** The view's columns as compared with the SELECT: the average rounded. */
  private static final String CHECK = "SELECT k, n, cx, sx, mn, mx, round(ax, 6) FROM (%s)";
  /** (c): no min or max. */
  private static final String SUMS = "SELECT k, count(*) AS n, count(x) AS cx, sum(x) AS sx, "
      + "avg(x) AS ax FROM %s GROUP BY k";
  private static final String SUMS_CHECK = "SELECT k, n, cx, sx, round(ax, 6) FROM (%s)";

  private AggregateViewBenchmark() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    long rows = Long.parseLong(args.getOrDefault("rows", "5000000"));
    long groups = Long.parseLong(args.getOrDefault("groups", "1000"));
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "5"));
    try (ViewBench b = ViewBench.start("agg-bench", args)) {
      run(b.spark, rows, groups, rounds);
    }
  }

  private static void run(SparkSession spark, long rows, long groups, int rounds) {
    spark.sql("CREATE NAMESPACE IF NOT EXISTS " + NS);
    String src = NS + ".src";
    spark.sql("CREATE TABLE " + src + " (id BIGINT, k BIGINT, x BIGINT, pad STRING)");
    long t0 = System.nanoTime();
    insert(spark, src, 0, rows, groups);
    System.out.printf("source: %,d rows in %,d groups loaded in %.1f s%n", rows, groups,
        ViewBench.secs(t0));
    String select = String.format(SELECT, src);
    ViewBench.timeCtas(spark, select, NS + ".warm_ctas");
    ViewBench.timeFullRefresh(spark, select, NS + ".warm_view");
    List<Double> ctas = new ArrayList<>();
    List<Double> full = new ArrayList<>();
    List<Double> sumsFull = new ArrayList<>();
    String sums = String.format(SUMS, src);
    for (int r = 0; r < rounds; r++) {
      List<Runnable> turn = new ArrayList<>(List.of(
          () -> ctas.add(ViewBench.timeCtas(spark, select, NS + ".c" + ctas.size())),
          () -> full.add(ViewBench.timeFullRefresh(spark, select,
              NS + ".v" + full.size()))));
      java.util.Collections.rotate(turn, r);
      turn.forEach(Runnable::run);
      sumsFull.add(ViewBench.timeFullRefresh(spark, sums, NS + ".s" + sumsFull.size()));
      System.out.printf("round %d: CTAS %.2f s, full refresh %.2f s; (c) full refresh %.2f s%n",
          r, ctas.get(r), full.get(r), sumsFull.get(r));
    }
    double c = ViewBench.median(ctas);
    double fr = ViewBench.median(full);
    System.out.printf("(a) full refresh / CTAS = %.2f / %.2f s = %.3f (target <= 1.1)%n", fr, c,
        fr / c);
    System.out.printf("RESULT aggregate full/CTAS %.3f target 1.1%n", fr / c);

    double sf = ViewBench.median(sumsFull);
    String[] views = {NS + ".v" + (rounds - 1), NS + ".s" + (rounds - 1)};
    String[][] checks = {
        {String.format(CHECK, "SELECT * FROM " + views[0]), String.format(CHECK, select)},
        {String.format(SUMS_CHECK, "SELECT * FROM " + views[1]),
            String.format(SUMS_CHECK, sums)}};
    double[] fulls = {fr, sf};
    long appended = rows / 100;
    long next = rows;
    incremental(spark, src, views, checks, next, appended, groups, 0, "warm-up", fulls);
    next += appended;
    List<Double> inc = new ArrayList<>();
    List<Double> sumsInc = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      double[] t = incremental(spark, src, views, checks, next, appended, groups, r + 1,
          "round " + r, fulls);
      inc.add(t[0]);
      sumsInc.add(t[1]);
      next += appended;
    }
    double im = ViewBench.median(inc);
    ViewBench.noopRefreshes(spark, views[0], fr);
    System.out.printf("(b) incremental refresh (+%,d rows, %,d updated, scattered over every "
        + "fragment) median %.2f s / full refresh %.2f s = %.3f (target <= 0.05)%n", appended,
        rows / 1000, im, fr, im / fr);
    System.out.printf("RESULT aggregate scattered incremental/full %.3f target 0.05%n", im / fr);
    double sm = ViewBench.median(sumsInc);
    System.out.printf("(c) without min and max: incremental median %.2f s / full refresh %.2f s "
        + "= %.3f%n", sm, sf, sm / sf);
    System.out.printf("RESULT aggregate (count, sum, avg) scattered incremental/full %.3f%n",
        sm / sf);
  }

  /** One change, then each view refreshed and checked; the refresh times, in seconds. */
  private static double[] incremental(SparkSession spark, String src, String[] views,
      String[][] checks, long from, long n, long groups, int round, String label,
      double[] full) {
    insert(spark, src, from, n, groups);
    spark.sql("UPDATE " + src + " SET x = x + 7 WHERE id % 1000 = " + (round * 7 % 1000));
    double[] out = new double[views.length];
    for (int v = 0; v < views.length; v++) {
      long t = System.nanoTime();
      Row r = spark.sql("REFRESH MATERIALIZED VIEW " + views[v]).collectAsList().get(0);
      out[v] = ViewBench.secs(t);
      System.out.printf("  %s, %s: %.2f s (refresh job %.2f s), %s rows inserted, %s "
          + "deleted; / full = %.3f%n", views[v], label, out[v],
          r.getLong(ViewBench.DURATION) / 1e3, r.get(4), r.get(5), out[v] / full[v]);
      ViewBench.sameRows(spark, label, checks[v][0], checks[v][1]);
    }
    return out;
  }

  private static void insert(SparkSession spark, String table, long from, long n, long groups) {
    spark.sql("INSERT INTO " + table + " SELECT id, (id * 7919) % " + groups + ", CASE WHEN "
        + "id % 101 = 0 THEN NULL ELSE (id * 31) % 100003 END, 'p' FROM range(" + from + ", "
        + (from + n) + ")");
  }
}
