package io.lancerest.examples.bench;

import io.lancerest.spark.mv.chunker.TextSplitter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Chunker views against a hand-written Spark {@code flatMap} of the same splitter, both read from
 * and written through the catalog, in one JVM over an in-process {@code RestAdapter("dir")}
 * server. Not a test: it prints figures and ratios.
 * <ul>
 *   <li>(a) full refresh ({@code TextSplitter}, {@code chunk_size = 256, overlap = 32}) against
 *       {@code table.select(_rowid, id, doc).flatMap(split).writeTo(...).create()} into a table
 *       of the same columns; rounds alternate who goes first (target &le; 1.2);
 *   <li>(b) incremental refresh after appending 1 % new documents and editing 0.1 % of them
 *       ({@code UPDATE ... WHERE id % 1000 = r}: spread over every fragment), against the full
 *       refresh (target &le; 5 %).
 * </ul>
 * Arguments, all optional: {@code documents=200000 rounds=3 warehouse=DIR log=WARN}.
 *
 * <p>{@code sweep=0.001,0.01,0.1} adds, after the check, refresh time against the size of the
 * change: for each fraction f, {@code sweep-rounds} times (3 by default), f &times; documents
 * appended and f / 10 &times; documents edited ({@code id % m = r}, spread over every fragment), a
 * timed REFRESH, then a timed {@code REFRESH … WITH (force = true)} (every parent expanded again)
 * of the same source version; and writes the chart {@code refresh-chunker.png} ({@code
 * charts=DIR|none}, see {@link Charts}).
 */
public final class ChunkerViewBenchmark {
  private static final String NS = "lance.cbench";
  /** About 1,000 characters of words from 2 to 9 letters, the same for an id every run. */
  private static final String DOC = "concat_ws(' ', transform(sequence(1, 160), i -> "
      + "substr(md5(concat(CAST(id AS STRING), '-', CAST(i AS STRING))), 1, 2 + i % 8)))";
  private static final String USING = "USING CHUNKER 'io.lancerest.spark.mv.chunker."
      + "TextSplitter' OPTIONS (input_columns = 'doc', chunk_size = 256, overlap = 32)";

  private ChunkerViewBenchmark() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    long docs = Long.parseLong(args.getOrDefault("documents", "200000"));
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "3"));
    Charts charts = Charts.of(args);
    List<Double> sweep = ViewBench.sizes(args, "sweep");
    int sweepRounds = Integer.parseInt(args.getOrDefault("sweep-rounds", "3"));
    try (ViewBench b = ViewBench.start("chunker-bench", args)) {
      String view = run(b.spark, docs, rounds);
      if (!sweep.isEmpty()) {
        List<ViewBench.SweepPoint> points = sweep(b.spark, view, docs, rounds, sweep,
            sweepRounds);
        charts.refreshBySize("refresh-chunker", "Chunker view: refresh time against the size of "
            + "the change", "documents changed (appended + edited), log scale", true, points,
            String.format("ChunkerViewBenchmark documents=%d (~5 chunks each), edits scattered, "
            + "median of %d per size", docs, sweepRounds));
      }
    }
  }

  /** The sweep on {@code view}: per fraction f, f &times; docs appended, f / 10 &times; edited. */
  private static List<ViewBench.SweepPoint> sweep(SparkSession spark, String view, long docs,
      int rounds, List<Double> fractions, int sweepRounds) {
    String src = NS + ".docs";
    long[] next = {docs + (rounds + 1) * (docs / 100)};
    return ViewBench.sweep(spark, view, fractions, sweepRounds, (f, step) -> {
      long appended = Math.round(docs * f);
      long m = Math.max(1, Math.round(10 / f));
      insert(spark, src, next[0], appended);
      next[0] += appended;
      spark.sql("UPDATE " + src + " SET doc = concat(doc, ' edited in sweep step " + step
          + "') WHERE id % " + m + " = " + (step * 7 + 5) % m);
      return appended + Math.max(1, docs / m);
    });
  }

  /** Runs (a) and (b); returns the view (b) refreshed. */
  private static String run(SparkSession spark, long docs, int rounds) {
    spark.sql("CREATE NAMESPACE " + NS);
    String src = NS + ".docs";
    spark.sql("CREATE TABLE " + src + " (id BIGINT, doc STRING) TBLPROPERTIES "
        + "('enable_stable_row_ids' = 'true')");
    long t0 = System.nanoTime();
    insert(spark, src, 0, docs);
    System.out.printf("source: %,d documents loaded in %.1f s (%s)%n", docs, ViewBench.secs(t0),
        ViewBench.loadAverage());
    // warm-up of both sides on a small copy: JIT, code generation, lance-core
    String small = NS + ".warm_docs";
    spark.sql("CREATE TABLE " + small + " TBLPROPERTIES ('enable_stable_row_ids' = 'true') AS "
        + "SELECT * FROM " + src + " WHERE id < 5000");
    flatMap(spark, small, NS + ".warm_flat");
    spark.sql("CREATE MATERIALIZED VIEW " + NS + ".warm_view " + USING + " AS SELECT id, doc "
        + "FROM " + small);

    List<Double> flat = new ArrayList<>();
    List<Double> full = new ArrayList<>();
    String view = null;
    for (int r = 0; r < rounds; r++) {
      String v = NS + ".v" + r;
      if (r % 2 == 0) {
        flat.add(flatMap(spark, src, NS + ".flat" + r));
        full.add(fullRefresh(spark, src, v));
      } else {
        full.add(fullRefresh(spark, src, v));
        flat.add(flatMap(spark, src, NS + ".flat" + r));
      }
      System.out.printf("round %d: flatMap %.2f s, full refresh %.2f s%n", r, flat.get(r),
          full.get(r));
      spark.sql("DROP TABLE " + NS + ".flat" + r + " PURGE");
      if (view != null) {
        spark.sql("DROP MATERIALIZED VIEW " + view);
      }
      view = v;
    }
    double fl = ViewBench.median(flat);
    double fu = ViewBench.median(full);
    long children = spark.table(view).count();
    System.out.printf("(a) full refresh / flatMap = %.2f / %.2f s = %.3f (target <= 1.2); "
        + "%,d children%n", fu, fl, fu / fl, children);
    System.out.printf("RESULT chunker full/flatMap %.3f target 1.20%n", fu / fl);

    long extra = docs / 100;
    long next = docs;
    List<Double> inc = new ArrayList<>();
    for (int r = 0; r <= rounds; r++) { // round 0 is a warm-up
      insert(spark, src, next, extra);
      next += extra;
      spark.sql("UPDATE " + src + " SET doc = concat(doc, ' edited in round " + r + "') WHERE "
          + "id % 1000 = " + (r * 7 + 3));
      long t = System.nanoTime();
      Row res = spark.sql("REFRESH MATERIALIZED VIEW " + view).collectAsList().get(0);
      double s = ViewBench.secs(t);
      System.out.printf("  incremental %s: %.2f s (job %.2f s), %s inserted, %s deleted; / full "
          + "= %.3f%n", r == 0 ? "warm-up" : "round " + r, s, res.getLong(7) / 1e3, res.get(4),
          res.get(5), s / fu);
      sameAsFlatMap(spark, view, src, r == 0 ? "warm-up" : "round " + r);
      if (r > 0) {
        inc.add(s);
      }
    }
    double im = ViewBench.median(inc);
    ViewBench.noopRefreshes(spark, view, fu);
    System.out.printf("(b) incremental (+%,d documents, 0.1 %% edited, scattered) median %.2f s "
        + "/ full %.2f s = %.3f (target <= 0.05)%n", extra, im, fu, im / fu);
    System.out.printf("RESULT chunker incremental/full %.3f target 0.05%n", im / fu);
    // the view against a rebuild of the same source version
    String fresh = NS + ".fresh";
    spark.sql("CREATE MATERIALIZED VIEW " + fresh + " " + USING + " AS SELECT id, doc FROM "
        + src);
    String cols = "SELECT id, __child_index, chunk, char_offset FROM ";
    long diff = spark.sql(cols + view).exceptAll(spark.sql(cols + fresh)).count()
        + spark.sql(cols + fresh).exceptAll(spark.sql(cols + view)).count();
    System.out.printf("check: rows differing between the view and a rebuild: %,d%n", diff);
    return view;
  }

  private static void insert(SparkSession spark, String table, long from, long n) {
    spark.sql("INSERT INTO " + table + " SELECT id, " + DOC + " FROM range(" + from + ", "
        + (from + n) + ")");
  }

  private static double fullRefresh(SparkSession spark, String src, String view) {
    spark.sql("CREATE MATERIALIZED VIEW " + view + " " + USING + " AS SELECT id, doc FROM " + src
        + " WITH NO DATA");
    long t = System.nanoTime();
    spark.sql("REFRESH MATERIALIZED VIEW " + view).collectAsList();
    return ViewBench.secs(t);
  }

  /** The children of {@code src} by the hand-written flatMap of the same splitter. */
  private static Dataset<Row> children(SparkSession spark, String src) {
    StructType out = new StructType()
        .add("__source_row_id", DataTypes.LongType, false)
        .add("__child_index", DataTypes.IntegerType, false)
        .add("id", DataTypes.LongType, false)
        .add("chunk", DataTypes.StringType, false)
        .add("char_offset", DataTypes.IntegerType, false);
    FlatMapFunction<Row, Row> split = r -> {
      TextSplitter t = TextSplitter.of(null, 256, 32);
      Iterator<Row> it = t.split(r.getString(2));
      List<Row> rows = new ArrayList<>();
      int i = 0;
      while (it.hasNext()) {
        Row c = it.next();
        rows.add(RowFactory.create(r.getLong(0), i++, r.getLong(1), c.get(0), c.get(1)));
      }
      return rows.iterator();
    };
    return spark.table(src).selectExpr("_rowid", "id", "doc").flatMap(split,
        Encoders.row(out));
  }

  /** The baseline: the same splitter in a flatMap, read and written through the catalog. */
  private static double flatMap(SparkSession spark, String src, String target) {
    long t = System.nanoTime();
    children(spark, src).writeTo(target).create();
    return ViewBench.secs(t);
  }

  /** The view's rows against the flatMap's of the same source version, by count and hash. */
  private static boolean sameAsFlatMap(SparkSession spark, String view, String src,
      String label) {
    children(spark, src).createOrReplaceTempView("cbench_expected");
    return ViewBench.sameRows(spark, label, "SELECT __source_row_id, __child_index, id, chunk, "
        + "char_offset FROM " + view, "SELECT * FROM cbench_expected");
  }


}
