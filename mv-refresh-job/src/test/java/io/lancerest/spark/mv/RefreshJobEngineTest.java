package io.lancerest.spark.mv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.LogCapture;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The RefreshJob CLI with its real runner ({@code RefreshJob::runInSpark}) against views on the
 * real directory server, in this JVM: exit codes, the view's content, progress logs and Spark job
 * descriptions naming the view and the job id.
 */
class RefreshJobEngineTest {
  static EngineFixture f;
  private static SparkListener listener;
  static final List<String> JOB_DESCRIPTIONS = new CopyOnWriteArrayList<>();

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    listener = new SparkListener() {
      @Override
      public void onJobStart(SparkListenerJobStart job) {
        String d = job.properties() == null ? null
            : job.properties().getProperty("spark.job.description");
        if (d != null) {
          JOB_DESCRIPTIONS.add(d);
        }
      }
    };
    f.spark.sparkContext().addSparkListener(listener);
  }

  @AfterAll
  static void stop() {
    f.spark.sparkContext().removeSparkListener(listener);
    f.close();
  }

  private int job(String... argv) {
    return RefreshJob.run(argv, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), RefreshJob::runInSpark);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private static void insert(String table, int from, int to) {
    StringBuilder values = new StringBuilder();
    for (int i = from; i < to; i++) {
      values.append(i == from ? "" : ", ").append("(").append(i).append(", ").append(i % 7)
          .append(")");
    }
    f.sql("INSERT INTO " + table + " VALUES " + values);
  }

  @Test
  void refreshesAQueryViewAndNamesViewAndJobInLogsAndSparkJobs() throws Exception {
    String ns = f.namespace("rj");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, score INT)");
    insert(src, 0, 30);
    String select = "SELECT id, score * 10 AS s FROM " + src + " WHERE score > 2";
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS " + select);
    insert(src, 30, 40);
    f.sql("DELETE FROM " + src + " WHERE id < 5");
    long inserted = f.rows(select + " AND id >= 30").size();
    // Listener events arrive asynchronously: let the set-up's jobs be delivered before clearing.
    f.spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
    JOB_DESCRIPTIONS.clear();

    // --concurrency 2 coalesces the 3 source fragments' partitions into 2 write tasks: a task
    // then opens a partition from lance-core's writer thread (FragmentShipping lends it the
    // task's TaskContext).
    int code;
    String logs;
    // (a change this small is otherwise written on the driver, without Spark jobs)
    f.spark.conf().set("spark.lancerest.mv.query.localRefreshMaxRows", "0");
    f.spark.conf().set("spark.lancerest.mv.chunker.localRefreshMaxParents", "0");
    // Opened after Spark configured logging (it replaces a default configuration when it starts).
    try (LogCapture capture = new LogCapture("io.lancerest.spark.mv")) {
      code = job("--uri", f.uri, "--view", ns + ".v", "--job-id", "it-job-1",
          "--concurrency", "2");
      logs = capture.text();
    } finally {
      f.spark.conf().unset("spark.lancerest.mv.query.localRefreshMaxRows");
      f.spark.conf().unset("spark.lancerest.mv.chunker.localRefreshMaxParents");
    }

    assertEquals(RefreshJob.DONE, code, err());
    assertEquals("refresh-job: view " + ns + ".v job it-job-1 DONE kind=query "
        + "source_version=4 rows_inserted=" + inserted + " rows_deleted=2 skipped=0",
        out.toString(StandardCharsets.UTF_8).replaceAll(" duration_ms=\\d+\\s*$", ""));
    assertEquals(f.rows(select), f.rows("SELECT id, s FROM lance." + ns + ".v"));
    String view = RefreshJob.CATALOG + "." + ns + ".v";
    String tag = view + " (job it-job-1)";
    assertTrue(logs.contains("INFO io.lancerest.spark.mv.engine.EngineViews Refreshing query "
        + "view " + view + " (job it-job-1) from "), logs);
    assertTrue(logs.contains("INFO io.lancerest.spark.mv.query.QueryRefresh View " + tag
        + ": source version 4 "), logs);
    assertTrue(logs.contains("INFO io.lancerest.spark.mv.query.QueryRefresh View " + tag
        + ": committed view version "), logs);
    f.spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
    assertTrue(!JOB_DESCRIPTIONS.isEmpty()
        && JOB_DESCRIPTIONS.stream().allMatch(d -> d.startsWith("REFRESH MATERIALIZED VIEW "
        + tag)), JOB_DESCRIPTIONS.toString());
    Row lastJob = f.sql("DESCRIBE MATERIALIZED VIEW lance." + ns + ".v").stream()
        .filter(r -> r.getString(0).equals("Last job")).findFirst().orElseThrow();
    assertTrue(lastJob.getString(1).startsWith("{\"job_id\":\"it-job-1\",\"status\":\"DONE\""),
        lastJob.getString(1));
  }

  @Test
  void exitCodesForAMissingViewAMissingSourceAndAFailedRefresh() {
    String ns = f.namespace("rjx");
    assertEquals(RefreshJob.NOT_FOUND, job("--uri", f.uri, "--view", ns + ".nope"));
    assertEquals("refresh-job: not found: Materialized view " + RefreshJob.CATALOG + "." + ns
        + ".nope does not exist\n", err());

    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, score INT)");
    insert(src, 0, 10);
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS SELECT id FROM " + src);
    err.reset();
    assertEquals(RefreshJob.FAILED, job("--uri", f.uri, "--view", ns + ".v", "--src-version",
        "1"));
    assertTrue(err().startsWith("refresh-job: failed: InvalidOptionException: src_version 1 is "
        + "older than the version view " + RefreshJob.CATALOG + "." + ns + ".v already reflects "
        + "(2)"), err());

    f.sql("DROP TABLE " + src);
    err.reset();
    assertEquals(RefreshJob.NOT_FOUND, job("--uri", f.uri, "--view", ns + ".v"));
    assertEquals("refresh-job: not found: Source table of view " + RefreshJob.CATALOG + "." + ns
        + ".v " + RefreshJob.CATALOG + "." + ns + ".src does not exist\n", err());
  }
}
