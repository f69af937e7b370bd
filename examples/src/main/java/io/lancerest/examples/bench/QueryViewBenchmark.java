package io.lancerest.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * Query materialized views against their baselines, in one JVM and one SparkSession over an
 * in-process {@code RestAdapter("dir")} server. Not a test: it prints figures and ratios.
 * <ul>
 *   <li>(a) a full refresh of a query view over R source rows versus {@code CREATE TABLE … AS
 *       SELECT} of the same projection through the catalog (target ratio &le; 1.05), and versus
 *       a CTAS of the same projection with the two columns a view adds ({@code _rowid AS
 *       __source_row_id, true AS __is_set}): what the view stores, so the floor of the
 *       first ratio;</li>
 *   <li>(b) an incremental refresh after appending 1 % new rows and updating 0.1 % (lance-spark
 *       UPDATE, so delete + insert of those rows) versus the full refresh (target &le; 10 %). With
 *       {@code pattern=contiguous} (the default) each round updates one contiguous id range;
 *       with {@code pattern=scattered} it updates the rows {@code id % 1000 = r}, spread over
 *       every fragment, as real updates are (target &le; 5 %).</li>
 * </ul>
 * In (a) the three take turns going first; the median of each is reported. (b) runs one
 * uncounted warm-up round, then {@code rounds} rounds, and reports the median, checking the view
 * against the SELECT (count and hash sum) after every round; it then times five REFRESHes with
 * nothing to do (the statement's fixed cost) and compares the view with the SELECT row by row.
 * Arguments, all optional: {@code rows=5000000 rounds=5 pattern=contiguous|scattered
 * warehouse=DIR} (without {@code warehouse}, a temporary directory, removed at the end).
 *
 * <p>{@code sweep=0.0001,0.001,0.01,0.1} adds, after the check, refresh time against the size of
 * the change: for each fraction f, {@code sweep-rounds} times (3 by default), f &times; rows new
 * rows and f / 10 &times; rows updated in the same pattern, a timed REFRESH, then a timed
 * {@code REFRESH … WITH (force = true)} (the full rebuild) of the same source version; and writes
 * the chart {@code refresh-query-<pattern>.png} ({@code charts=DIR|none}, see {@link Charts}).
 */
public final class QueryViewBenchmark {
  private static final String NS = "lance.bench";
  private static final String PROJECTION = "SELECT id, upper(name) AS uname, score * 2 AS s2, "
      + "payload FROM %s WHERE score %% 10 <> 0";
  /** {@link #PROJECTION} with the columns a query view adds: what a view of it stores. */
  private static final String LAYOUT_PROJECTION = "SELECT _rowid AS __source_row_id, true AS "
      + "__is_set, id, upper(name) AS uname, score * 2 AS s2, payload FROM %s WHERE score "
      + "%% 10 <> 0";

  /** Column of the REFRESH result row with the job's own duration (ms). */

  private QueryViewBenchmark() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    long rows = Long.parseLong(args.getOrDefault("rows", "5000000"));
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "5"));
    String pattern = args.getOrDefault("pattern", "contiguous");
    if (!pattern.equals("contiguous") && !pattern.equals("scattered")) {
      throw new IllegalArgumentException("pattern is contiguous or scattered, got " + pattern);
    }
    Charts charts = Charts.of(args);
    List<Double> sweep = ViewBench.sizes(args, "sweep");
    int sweepRounds = Integer.parseInt(args.getOrDefault("sweep-rounds", "3"));
    boolean scattered = pattern.equals("scattered");
    try (ViewBench b = ViewBench.start("qv-bench", args)) {
      run(b.spark, rows, rounds, scattered);
      if (!sweep.isEmpty()) {
        List<ViewBench.SweepPoint> points = sweep(b.spark, rows, rounds, scattered, sweep,
            sweepRounds);
        charts.refreshBySize("refresh-query-" + pattern, "Query view: refresh time against the "
            + "size of the change", "rows changed (appended + updated), log scale", true, points,
            String.format("QueryViewBenchmark rows=%d, %s updates, median of %d per size",
            rows, pattern, sweepRounds));
      }
    }
  }

  /**
   * The sweep on the view (b) left: per fraction f, f &times; rows appended and f / 10 &times;
   * rows updated (an id range after those (b) used, or {@code id % m = r} spread over every
   * fragment).
   */
  private static List<ViewBench.SweepPoint> sweep(SparkSession spark, long rows, int rounds,
      boolean scattered, List<Double> fractions, int sweepRounds) {
    String src = NS + ".src";
    long[] next = {spark.table(src).agg(functions.max("id")).first().getLong(0) + 1};
    long[] updatedTo = {(rounds + 1L) * (rows / 1000)};
    return ViewBench.sweep(spark, NS + ".v" + (rounds - 1), fractions, sweepRounds,
        (f, step) -> {
          long appended = Math.round(rows * f);
          long updated = Math.max(1, Math.round(rows * f / 10));
          insert(spark, src, next[0], appended);
          next[0] += appended;
          String where;
          if (scattered) {
            long m = Math.max(1, rows / updated);
            where = "id % " + m + " = " + (step * 7 + 1) % m;
          } else {
            where = "id >= " + updatedTo[0] + " AND id < " + (updatedTo[0] + updated);
            updatedTo[0] += updated;
          }
          spark.sql("UPDATE " + src + " SET payload = payload + 1, score = score + 1 WHERE "
              + where);
          return appended + updated;
        });
  }

  private static void run(SparkSession spark, long rows, int rounds, boolean scattered) {
    spark.sql("CREATE NAMESPACE " + NS);
    String src = NS + ".src";
    spark.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT, payload DOUBLE)");
    long t0 = System.nanoTime();
    insert(spark, src, 0, rows);
    System.out.printf("source: %,d rows loaded in %.1f s%n", rows, ViewBench.secs(t0));
    String select = String.format(PROJECTION, src);
    // warm-up: JIT, Spark code generation, lance-core
    ViewBench.timeCtas(spark, String.format(PROJECTION, src) + " LIMIT 100000",
        NS + ".warm_ctas");
    ViewBench.timeFullRefresh(spark, select, NS + ".warm_view");

    // The same SELECT with the view's two layout columns: what the view stores, written by a
    // CTAS; the floor of the full refresh against the plain CTAS.
    String layout = String.format(LAYOUT_PROJECTION, src);
    List<Double> ctas = new ArrayList<>();
    List<Double> full = new ArrayList<>();
    List<Double> ctasLayout = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      List<Runnable> turn = new ArrayList<>(List.of(
          () -> ctas.add(ViewBench.timeCtas(spark, select, NS + ".c" + ctas.size())),
          () -> full.add(ViewBench.timeFullRefresh(spark, select,
              NS + ".v" + full.size())),
          () -> ctasLayout.add(ViewBench.timeCtas(spark, layout,
              NS + ".l" + ctasLayout.size()))));
      java.util.Collections.rotate(turn, r); // who goes first changes every round
      turn.forEach(Runnable::run);
      System.out.printf("round %d: CTAS %.2f s, full refresh %.2f s, CTAS with the layout "
          + "columns %.2f s%n", r, ctas.get(r), full.get(r), ctasLayout.get(r));
      spark.sql("DROP TABLE " + NS + ".l" + r + " PURGE");
    }
    double c = ViewBench.median(ctas);
    double fr = ViewBench.median(full);
    double cl = ViewBench.median(ctasLayout);
    System.out.printf("(a) full refresh / CTAS = %.2f / %.2f s = %.3f (target <= 1.05); "
        + "/ CTAS with the layout columns %.2f s = %.3f%n", fr, c, fr / c, cl, fr / cl);
    System.out.printf("RESULT query full/CTAS %.3f target 1.05%n", fr / c);
    System.out.printf("RESULT query full/CTAS-with-layout-columns %.3f%n", fr / cl);

    // (b) incremental: the last full-refresh view stays. Each round appends 1 % new rows and
    // updates 0.1 % (rows not touched before), then refreshes. The first round is not counted:
    // it warms Spark's code generation for the incremental plans, as warm_view did for (a).
    String view = NS + ".v" + (rounds - 1);
    long appended = rows / 100;
    long updated = rows / 1000;
    long next = rows;
    incremental(spark, src, view, next, appended, update(scattered, 0, updated), fr, "warm-up");
    next += appended;
    List<Double> inc = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      inc.add(incremental(spark, src, view, next, appended, update(scattered, r + 1, updated),
          fr, "round " + r));
      next += appended;
    }
    double im = ViewBench.median(inc);
    ViewBench.noopRefreshes(spark, view, fr);
    System.out.printf("(b) incremental refresh (+%,d rows, %,d updated %s) median %.2f s / full "
        + "refresh %.2f s = %.3f (target <= %s)%n", appended, updated, scattered
            ? "scattered over every fragment" : "in one id range", im, fr, im / fr,
        scattered ? "0.05" : "0.10");
    System.out.printf("RESULT query %s incremental/full %.3f target %s%n", scattered
        ? "scattered" : "contiguous", im / fr, scattered ? "0.05" : "0.10");
    long expected = spark.sql(select).count();
    long actual = spark.table(view).count();
    System.out.printf("check: view rows %,d, SELECT rows %,d -> %s%n", actual, expected,
        actual == expected ? "equal" : "DIFFERENT");
    long diff = spark.sql("SELECT id, uname, s2, payload FROM " + view).exceptAll(spark.sql(
        select)).count() + spark.sql(select).exceptAll(spark.sql(
        "SELECT id, uname, s2, payload FROM " + view)).count();
    System.out.printf("check: rows differing between the view and the SELECT: %,d%n", diff);
  }

  /**
   * The rows round {@code round} updates: {@code u} ids of one range not updated before, or
   * (scattered) one id in 1,000 of every fragment, a residue no round used before.
   */
  static String update(boolean scattered, int round, long u) {
    return scattered ? "id % 1000 = " + (round * 7 % 1000)
        : "id >= " + (round * u) + " AND id < " + ((round + 1) * u);
  }

  /** Appends {@code n} rows from {@code from}, updates the rows {@code where}, refreshes. */
  private static double incremental(SparkSession spark, String src, String view, long from,
      long n, String where, double full, String label) {
    insert(spark, src, from, n);
    spark.sql("UPDATE " + src + " SET payload = payload + 1, score = score + 1 WHERE " + where);
    long t = System.nanoTime();
    Row r = spark.sql("REFRESH MATERIALIZED VIEW " + view).collectAsList().get(0);
    double s = ViewBench.secs(t);
    System.out.printf("  incremental %s: %.2f s (refresh job %.2f s), %s inserted, %s deleted; "
        + "/ full = %.3f%n", label, s, r.getLong(ViewBench.DURATION) / 1e3, r.get(4), r.get(5),
        s / full);
    ViewBench.sameRows(spark, label, "SELECT id, uname, s2, payload FROM " + view,
        String.format(PROJECTION, src));
    return s;
  }

  private static void insert(SparkSession spark, String table, long from, long n) {
    spark.sql("INSERT INTO " + table + " SELECT id, concat('name-', id), CAST(id % 97 AS INT), "
        + "id * 0.5 FROM range(" + from + ", " + (from + n) + ")");
  }
}
