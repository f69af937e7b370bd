package io.lancerest.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@code SHOW JOBS FOR v LIMIT 10} as the job log ages: 1,000 ended jobs of one view, then
 * 100,000, with the log's retention on (the defaults: 30 days, 1,000 ended jobs per view) and off
 * (the peer, in the same run: retention and per-view cap too large to prune anything). Each pass
 * has a session and a job log of its own ({@code spark.lancerest.mv.jobs.table}). The jobs are
 * written as the engine writes them (a {@code RUNNING} and a {@code DONE} row each, ended one
 * second apart within the last 28 hours), in one {@code INSERT} into the log table per step, one
 * fragment per 1,000 jobs; then a real REFRESH ends, and its job service maintains the log on its
 * maintenance thread (prunes, then compacts), as after every job. An unreported pass of 10,000
 * jobs warms the JVM up first. Reported: the median of {@code
 * reps} timed {@code SHOW JOBS} at each size, their ratio, how long the maintenance took (from the
 * REFRESH's return until the log was compacted, polled every 100 ms) and the log's rows. Target
 * (issue 30): with retention on, 100,000 / 1,000 at most 2×.
 *
 * <pre>
 *   mvn -B -ntp -Pquickstart -DskipTests -pl examples -am verify \
 *       -Dquickstart.main=io.lancerest.examples.bench.JobLogBenchmark
 * </pre>
 */
public final class JobLogBenchmark {
  private JobLogBenchmark() {}

  private static final int FIRST = 1_000;
  private static final long MAINTENANCE_WAIT_MS = 600_000;

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    int jobs = Integer.parseInt(args.getOrDefault("jobs", "100000"));
    int reps = Integer.parseInt(args.getOrDefault("reps", "7"));
    try (ViewBench b = ViewBench.start("joblog-bench", args)) {
      // Warm-up, not reported: without it the first pass pays the JIT and the session's first
      // plans at its 1,000 jobs, which would flatter its ratio.
      pass(b, "warm", 10 * FIRST, reps, Map.of(), new ArrayList<>());
      List<String> report = new ArrayList<>();
      double on = pass(b, "on", jobs, reps, Map.of(), report);
      double off = pass(b, "off", jobs, reps, Map.of("spark.lancerest.mv.jobs.retention",
          "36500d", "spark.lancerest.mv.jobs.keepPerView", Integer.toString(Integer.MAX_VALUE)),
          report);
      System.out.println("job log benchmark (" + ViewBench.loadAverage() + ", "
          + Runtime.getRuntime().availableProcessors() + " cores):");
      report.forEach(r -> System.out.println("  " + r));
      System.out.printf("RESULT joblog SHOW JOBS at %,d / at %,d jobs, retention off (peer) "
          + "%.3f%n", jobs, FIRST, off);
      System.out.printf("RESULT joblog SHOW JOBS at %,d / at %,d jobs, retention on %.3f target "
          + "2.00%n", jobs, FIRST, on);
    }
  }

  /** One pass in a session of its own; returns SHOW JOBS at {@code jobs} / at {@value FIRST}. */
  private static double pass(ViewBench b, String name, int jobs, int reps,
      Map<String, String> confs, List<String> report) throws InterruptedException {
    SparkSession spark = b.spark.newSession();
    String log = "mv_jobs_" + name;
    spark.conf().set("spark.lancerest.mv.jobs.table", log);
    spark.conf().set("spark.lancerest.mv.jobs.heartbeatInterval", "200ms");
    confs.forEach(spark.conf()::set);
    String ns = "joblog_" + name;
    spark.sql("CREATE NAMESPACE lance." + ns);
    spark.sql("CREATE TABLE lance." + ns + ".src (id BIGINT)");
    spark.sql("INSERT INTO lance." + ns + ".src SELECT id FROM range(0, 100)");
    String view = "lance." + ns + ".v";
    // a real job first: it creates the log, and its row names the view as the log does
    spark.sql("CREATE MATERIALIZED VIEW " + view + " AS SELECT id FROM lance." + ns + ".src");
    String table = "lance.__system." + log;
    String viewId = spark.sql("SELECT view_id FROM " + table + " LIMIT 1").first().getString(0);
    long now = System.currentTimeMillis();

    write(spark, table, ns, viewId, 0, FIRST, jobs, now);
    double small = showJobs(spark, view, reps);
    write(spark, table, ns, viewId, FIRST, jobs - FIRST, jobs, now);
    long rowsBefore = count(spark, "SELECT count(*) FROM " + table);
    long t0 = System.nanoTime();
    spark.sql("REFRESH MATERIALIZED VIEW " + view + " WITH (force = true)").collect();
    long deadline = System.currentTimeMillis() + MAINTENANCE_WAIT_MS;
    long fragments;
    while ((fragments = count(spark, "SELECT count(DISTINCT _fragid) FROM " + table)) > 16) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the job log " + table + " still has " + fragments
            + " fragments " + MAINTENANCE_WAIT_MS / 1000 + " s after the REFRESH ended: its "
            + "maintenance did not run");
      }
      Thread.sleep(100);
    }
    double maintenance = ViewBench.secs(t0);
    double large = showJobs(spark, view, reps);
    long rowsAfter = count(spark, "SELECT count(*) FROM " + table);
    long listed = spark.sql("SHOW JOBS FOR " + view).count();
    String label = "retention " + name;
    report.add(String.format("%s: SHOW JOBS FOR v LIMIT 10 at %,d jobs %.3f s, at %,d jobs %.3f "
        + "s (medians of %d): %.2fx", label, FIRST, small, jobs, large, reps, large / small));
    report.add(String.format("%s: log rows %,d before the maintenance, %,d after (%d fragments); "
        + "SHOW JOBS FOR v lists %,d jobs; REFRESH and maintenance %.2f s", label, rowsBefore,
        rowsAfter, fragments, listed, maintenance));
    System.out.println(report.get(report.size() - 2));
    System.out.println(report.get(report.size() - 1));
    return large / small;
  }

  /**
   * Jobs {@code from} to {@code from + n - 1} of the view, ended one second apart, the last of
   * {@code total} ending a minute before {@code now}; {@value FIRST} jobs a fragment.
   */
  private static void write(SparkSession spark, String table, String ns, String viewId,
      int from, int n, int total, long now) {
    String end = "(" + (now - 60_000L) + " - (" + (total - 1) + " - j) * 1000)";
    spark.sql("INSERT INTO " + table + " SELECT concat('bench-', CAST(j AS STRING)), "
        + "CAST(j * 2 + s + 1 AS BIGINT), '" + ns + ".v', '" + viewId.replace("'", "\\'") + "', "
        + "'REFRESH', 'query', IF(s = 0, 'RUNNING', 'DONE'), CAST(1 AS BIGINT), "
        + "timestamp_millis(" + end + " - 1000), IF(s = 0, CAST(NULL AS TIMESTAMP), "
        + "timestamp_millis(" + end + ")), timestamp_millis(" + end + " - 1000 + s * 1000), "
        + "CAST(2 AS BIGINT), CAST(2 AS BIGINT), CAST(100 AS BIGINT), CAST(100 AS BIGINT), "
        + "CAST(0 AS BIGINT), CAST(0 AS BIGINT), CAST(NULL AS STRING), 'bench-app', 'bench' "
        + "FROM (SELECT " + from + " + id DIV 2 AS j, id % 2 AS s FROM range(0, " + 2L * n
        + ", 1, " + Math.max(1, n / FIRST) + "))");
  }

  /** The median of {@code reps} timed {@code SHOW JOBS FOR view LIMIT 10}, after one untimed. */
  private static double showJobs(SparkSession spark, String view, int reps) {
    spark.sql("SHOW JOBS FOR " + view + " LIMIT 10").collectAsList();
    List<Double> times = new ArrayList<>();
    for (int i = 0; i < reps; i++) {
      long t0 = System.nanoTime();
      spark.sql("SHOW JOBS FOR " + view + " LIMIT 10").collectAsList();
      times.add(ViewBench.secs(t0));
    }
    return ViewBench.median(times);
  }

  private static long count(SparkSession spark, String sql) {
    return spark.sql(sql).first().getLong(0);
  }
}
