package io.lancerest.examples.bench;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.spark.computed.BackfillResult;
import io.lancerest.spark.computed.ComputedColumnSpec;
import io.lancerest.spark.computed.spark.ComputedColumns;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.lance.Dataset;

/**
 * Computed columns: backfills against a Spark job that computes the same column, in one JVM and
 * one SparkSession over an in-process {@code RestAdapter("dir")} server. Not a test: it prints
 * figures and ratios. The source has R rows of {@code (id BIGINT, body STRING)}, loaded in 20
 * inserts (20 fragments or more); the function is {@link BodyLength} ({@code length(body)}).
 * <ul>
 *   <li>(a) a full backfill of the computed column against a CTAS of {@code SELECT *,
 *       length(body)} through the catalog (lance-spark's write), the hand-written job that
 *       computes the same column (target &le; 1.0: the backfill writes one column, the CTAS the
 *       table);</li>
 *   <li>(b) rounds of change (+1 % rows appended, 0.1 % updated: {@code id % 1000 = r}, spread
 *       over every fragment), each followed by a backfill: its time against the full backfill's
 *       (target &le; 5 %), and the rows it computed;</li>
 *   <li>(c) a backfill stopped half way (its Spark jobs cancelled once half of its commits
 *       landed, as a killed job would stop) and run again, against an uninterrupted backfill of
 *       an identical column with the same {@code commit_granularity}: the second run's time
 *       (target &le; 0.6).</li>
 * </ul>
 * Every column is checked after every backfill against Spark's {@code length(body)} (count and
 * hash of {@code id, value}).
 *
 * <p>Arguments, all optional: {@code rows=5000000 rounds=3 granularity=2 warehouse=DIR
 * log=WARN}.
 */
public final class BackfillBenchmark {
  private static final String NS = "lance.bfbench";
  private static final String SRC = NS + ".docs";
  private static final int LOADS = 20;

  private final SparkSession spark;
  private final String uri;
  /** The computed columns added so far, in order. */
  private final List<String> computed = new ArrayList<>();

  private BackfillBenchmark(SparkSession spark, String uri) {
    this.spark = spark;
    this.uri = uri;
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    long rows = Long.parseLong(args.getOrDefault("rows", "5000000"));
    int rounds = Integer.parseInt(args.getOrDefault("rounds", "3"));
    int granularity = Integer.parseInt(args.getOrDefault("granularity", "2"));
    System.out.printf("BackfillBenchmark rows=%d rounds=%d granularity=%d; %d cores, %s at the "
        + "start%n", rows, rounds, granularity, Runtime.getRuntime().availableProcessors(),
        ViewBench.loadAverage());
    try (ViewBench b = ViewBench.start("backfill-bench", args)) {
      new BackfillBenchmark(b.spark, b.uri()).run(rows, rounds, granularity);
    }
    System.out.printf("%s at the end%n", ViewBench.loadAverage());
  }

  /**
   * Appends rows {@code [from, from + n)}. Spark 3.5 wants a value for every column of a
   * catalog table in an INSERT, the computed ones too: they are given as NULL (the backfill
   * computes them).
   */
  private void insert(long from, long n) {
    StringBuilder nulls = new StringBuilder();
    computed.forEach(c -> nulls.append(", CAST(NULL AS INT) AS ").append(c));
    spark.sql("INSERT INTO " + SRC + " SELECT id, concat('document ', id, ' about topic ', "
        + "id % 97, repeat(' word', CAST(id % 13 AS INT)))" + nulls + " FROM range(" + from
        + ", " + (from + n) + ")");
  }

  private void run(long rows, int rounds, int granularity) throws Exception {
    spark.sql("CREATE NAMESPACE " + NS);
    spark.sql("CREATE TABLE " + SRC + " (id BIGINT, body STRING)");
    long t = System.nanoTime();
    long per = rows / LOADS;
    for (int i = 0; i < LOADS; i++) {
      insert(i * per, i == LOADS - 1 ? rows - i * per : per);
    }
    System.out.printf("source: %,d rows in %d fragments loaded in %.1f s%n", rows,
        fragments(), ViewBench.secs(t));

    // (a) full backfill against a CTAS that computes the same column
    add("body_len");
    t = System.nanoTime();
    BackfillResult full = backfill("body_len", Map.of());
    double fullSecs = ViewBench.secs(t);
    check("full backfill", "body_len");
    t = System.nanoTime();
    spark.sql("CREATE TABLE " + NS + ".peer AS SELECT *, length(body) AS body_len2 FROM " + SRC
        + " VERSION AS OF " + full.readVersion());
    double ctas = ViewBench.secs(t);
    System.out.printf("(a) full backfill %.2f s (%s) / CTAS of SELECT *, length(body) %.2f s = "
        + "%.3f (target <= 1.0)%n", fullSecs, full, ctas, fullSecs / ctas);
    System.out.printf("RESULT backfill full/ctas %.3f target 1.0%n", fullSecs / ctas);

    // (b) rounds of change, each followed by a backfill
    long next = rows;
    List<Double> ratios = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      long appended = rows / 100;
      insert(next, appended);
      next += appended;
      String where = "id % 1000 = " + ((r * 7 + 3) % 1000);
      spark.sql("UPDATE " + SRC + " SET body = concat(body, ' edited') WHERE " + where);
      t = System.nanoTime();
      BackfillResult inc = backfill("body_len", Map.of());
      double s = ViewBench.secs(t);
      ratios.add(s / fullSecs);
      System.out.printf("round %d (+%,d rows, %s updated): backfill %.2f s = %.1f %% of the "
          + "full one; %s%n", r, appended, where, s, 100 * s / fullSecs, inc);
      check("round " + r, "body_len");
    }
    double median = ViewBench.median(ratios);
    System.out.printf("(b) incremental / full backfill, median of %d rounds: %.1f %% (target "
        + "<= 5 %%)%n", rounds, 100 * median);
    System.out.printf("RESULT backfill incremental/full %.4f target 0.05%n", median);

    // (c) stopped half way and run again, against an uninterrupted backfill
    Map<String, String> g = Map.of("commit_granularity", String.valueOf(granularity));
    add("len_whole");
    t = System.nanoTime();
    backfill("len_whole", g);
    double whole = ViewBench.secs(t);
    check("uninterrupted backfill", "len_whole");
    add("len_stopped");
    long before = version();
    int groups = (fragments() + granularity - 1) / granularity;
    long halfway = before + Math.max(1, groups / 2) * 2L; // a data commit + its checkpoint each
    AtomicReference<Throwable> stopped = new AtomicReference<>();
    Thread first = new Thread(() -> {
      try {
        backfill("len_stopped", g);
      } catch (Throwable e) {
        stopped.set(e);
      }
    }, "backfill-to-stop");
    t = System.nanoTime();
    first.start();
    long deadline = System.nanoTime() + 30L * 60 * 1_000_000_000L;
    while (first.isAlive() && version() < halfway) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the backfill to stop did not reach version " + halfway
            + " within 30 minutes");
      }
      Thread.sleep(20);
    }
    spark.sparkContext().cancelAllJobs();
    first.join(10 * 60 * 1000L);
    if (first.isAlive()) {
      throw new IllegalStateException("the cancelled backfill did not end within 10 minutes");
    }
    System.out.printf("(c) first run stopped after %.2f s at version %d (of %d groups of %d "
        + "fragments, half landed: version %d): %s%n", ViewBench.secs(t), version(), groups,
        granularity, halfway, stopped.get() == null ? "it ended before the cancel"
            : String.valueOf(stopped.get().getMessage()).lines().findFirst().orElse(""));
    t = System.nanoTime();
    BackfillResult again = backfill("len_stopped", g);
    double second = ViewBench.secs(t);
    check("the resumed backfill", "len_stopped");
    System.out.printf("(c) backfill run again after the stop %.2f s (%s) / uninterrupted %.2f s "
        + "= %.3f (target <= 0.6)%n", second, again, whole, second / whole);
    System.out.printf("RESULT backfill resumed/uninterrupted %.3f target 0.6%n", second / whole);
  }

  private void add(String column) {
    computed.add(column);
    ComputedColumns.add(spark, SRC, new ComputedColumnSpec(column, BodyLength.class.getName(),
        null, List.of("id", "body"), Map.of(), false));
  }

  private BackfillResult backfill(String column, Map<String, String> options) {
    return ComputedColumns.backfill(spark, SRC, column, options);
  }

  /** Every row's value against Spark's {@code length(body)}. */
  private void check(String label, String column) {
    if (!ViewBench.sameRows(spark, label + " (" + column + ")", "SELECT id, " + column
        + " FROM " + SRC, "SELECT id, length(body) FROM " + SRC)) {
      throw new IllegalStateException(column + " is not length(body) after " + label);
    }
  }

  private String location() {
    String[] parts = SRC.split("\\.");
    try (LanceRestClient client = LanceRestClient.create(Map.of("uri", uri))) {
      return client.describeTable(new DescribeTableRequest().id(List.of(parts[1], parts[2])))
          .getLocation();
    }
  }

  private long version() {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(location(), a)) {
      return ds.version();
    }
  }

  private int fragments() {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(location(), a)) {
      return ds.getFragments().size();
    }
  }
}
