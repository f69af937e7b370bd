package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The job log: SHOW JOBS, DESCRIBE JOB, REFRESH ... ASYNC, CANCEL JOB. */
class JobLogTest {
  static EngineFixture f;

  /**
   * What these tests prune: nothing. They count the jobs they wrote, and the job service's own
   * maintenance of the log (on its maintenance thread, after jobs end) must not prune those of
   * showJobsPagesPastAThousandJobsNewestFirst (1,200 of one view) meanwhile; JobLogRetentionTest
   * tests the pruning.
   */
  static final JobLogRetention KEEP_ALL = new JobLogRetention(java.time.Duration.ofDays(36500),
      Integer.MAX_VALUE);

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    f.spark.conf().set(JobService.HEARTBEAT_INTERVAL_CONF, "500ms");
    f.spark.conf().set(JobService.KEEP_PER_VIEW_CONF, Integer.toString(Integer.MAX_VALUE));
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  /** Words of the text, 40 ms per source row; stops when its task is cancelled. */
  public static class SlowWords implements Chunker {
    @Override
    public org.apache.spark.sql.types.StructType outputSchema(Map<String, String> options,
        org.apache.spark.sql.types.StructType inputSchema) {
      return new org.apache.spark.sql.types.StructType().add("word",
          org.apache.spark.sql.types.DataTypes.StringType);
    }

    @Override
    public Iterator<Row> chunk(Row input) {
      for (int i = 0; i < 4; i++) {
        TaskContext tc = TaskContext.get();
        if (tc != null && tc.isInterrupted()) {
          throw new IllegalStateException("task cancelled");
        }
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      List<Row> out = new ArrayList<>();
      for (String w : input.getString(0).split(" ")) {
        out.add(RowFactory.create(w));
      }
      return out.iterator();
    }
  }

  private static void await(String what, long seconds, BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waited " + seconds + " s for " + what);
      }
      Thread.sleep(100);
    }
  }

  /** Another session of the application; runtime confs are per session, so copied. */
  private static SparkSession secondSession() {
    SparkSession s = f.spark.newSession();
    f.spark.conf().getAll().foreach(kv -> {
      if (kv._1().startsWith("spark.sql.catalog.") || kv._1().startsWith("spark.lancerest.")) {
        s.conf().set(kv._1(), kv._2());
      }
      return null;
    });
    return s;
  }

  private static Row jobRow(SparkSession s, String view, String jobId) {
    for (Row r : s.sql("SHOW JOBS FOR " + view).collectAsList()) {
      if (r.getString(0).equals(jobId)) {
        return r;
      }
    }
    return null;
  }

  private static String docs(String ns, int n) {
    String docs = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + docs + " (id BIGINT, body STRING)");
    StringBuilder values = new StringBuilder();
    for (int i = 0; i < n; i++) {
      values.append(i == 0 ? "" : ", ").append("(").append(i).append(", 'w").append(i)
          .append(" x").append(i % 7).append("')");
    }
    f.sql("INSERT INTO " + docs + " VALUES " + values);
    return docs;
  }

  /** A chunker view ({@link SlowWords}) over {@code rows} documents, in a new namespace. */
  private static String slowView(String prefix, int rows) {
    String ns = f.namespace(prefix);
    String docs = docs(ns, rows);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " USING CHUNKER '" + SlowWords.class.getName()
        + "' OPTIONS (input_columns = 'body') AS SELECT id, body FROM " + docs
        + " WITH NO DATA");
    return v;
  }

  private static Map<String, String> info(String jobId) {
    Map<String, String> m = new java.util.LinkedHashMap<>();
    for (Row r : f.sql("DESCRIBE JOB '" + jobId + "' IN lance")) {
      m.put(r.getString(0), r.getString(1));
    }
    return m;
  }

  /** The current catalog is Spark's own: a job id alone is looked up in the Lance catalogs. */
  @Test
  void aJobIdWithoutACatalogIsFoundInTheSessionsLanceCatalog() {
    assertEquals("spark_catalog",
        f.spark.sessionState().catalogManager().currentCatalog().name());
    String ns = f.namespace("jid");
    String docs = docs(ns, 3);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id FROM " + docs);
    f.sql("REFRESH MATERIALIZED VIEW " + v + " WITH (job_id = 'jid-done', force = true)");

    Map<String, String> described = new java.util.LinkedHashMap<>();
    for (Row r : f.sql("DESCRIBE JOB 'jid-done'")) {
      described.put(r.getString(0), r.getString(1));
    }
    assertEquals("DONE", described.get("Status"), described.toString());
    assertEquals(info("jid-done"), described, "the same as with IN lance");
    MaterializedViewException ended = assertThrows(MaterializedViewException.class,
        () -> f.sql("CANCEL JOB 'jid-done'"));
    assertEquals("Job 'jid-done' of view " + ns + ".v has already ended (DONE); CANCEL JOB "
        + "stops RUNNING jobs only", ended.getMessage());
    MaterializedViewException unknown = assertThrows(MaterializedViewException.class,
        () -> f.sql("DESCRIBE JOB 'jid-nope'"));
    assertEquals("Job 'jid-nope' is in the job log of none of this session's Lance catalogs "
        + "[lance] (the current catalog 'spark_catalog' is not a Lance catalog); name the "
        + "catalog: DESCRIBE JOB 'jid-nope' IN <catalog>", unknown.getMessage());
  }

  @Test
  void aRefreshIsRecordedDoneWithItsCountsAndAFailedOneWithItsMessage() throws Exception {
    String ns = f.namespace("jl");
    String docs = docs(ns, 5);
    String v = "lance." + ns + ".q";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, body FROM " + docs
        + " WITH NO DATA");
    Row done = f.sql("REFRESH MATERIALIZED VIEW " + v + " WITH (job_id = 'jl-done')").get(0);
    assertEquals("DONE", done.getString(1));

    Row shown = jobRow(f.spark, v, "jl-done");
    assertEquals(List.of("jl-done", ns + ".q", "query", "DONE", 2L, 5L, 0L, 0L),
        List.of(shown.get(0), shown.get(1), shown.get(2), shown.get(3), shown.get(4),
            shown.get(8), shown.get(9), shown.get(10)));
    assertTrue(shown.get(6) != null, "finished_at is set");
    assertEquals(f.spark.sparkContext().applicationId(), info("jl-done").get("Spark application"));

    MaterializedViewException e = assertThrows(MaterializedViewException.class, () -> f.sql(
        "REFRESH MATERIALIZED VIEW " + v + " WITH (job_id = 'jl-failed', src_version = 99)"));
    String expected = "src_version 99 does not exist: the source of view " + v + " is at "
        + "version 2 (give 1 to 2, or omit src_version for the latest)";
    assertEquals(expected, e.getMessage());
    Row failed = jobRow(f.spark, v, "jl-failed");
    assertEquals("FAILED", failed.getString(3));
    assertEquals(expected, failed.getString(11));
    assertEquals("FAILED", info("jl-failed").get("Status"));

    MaterializedViewException unknown = assertThrows(MaterializedViewException.class,
        () -> f.sql("DESCRIBE JOB 'nope' IN lance"));
    assertEquals("Job 'nope' is not in the job log lance.__system.mv_jobs of catalog 'lance'; "
        + "SHOW JOBS lists the jobs it has", unknown.getMessage());
    MaterializedViewException ended = assertThrows(MaterializedViewException.class,
        () -> f.sql("CANCEL JOB 'jl-done' IN lance"));
    assertEquals("Job 'jl-done' of view " + ns + ".q has already ended (DONE); CANCEL JOB stops "
        + "RUNNING jobs only", ended.getMessage());
  }

  /**
   * A refresh that fails before its refresh sequence (its source was dropped) is a job that
   * started and failed: RUNNING, then FAILED with the message, both with the view's kind.
   */
  @Test
  void aRefreshWhoseSourceWasDroppedIsRecordedRunningThenFailedWithItsKind() {
    String ns = f.namespace("jl_gone");
    String docs = docs(ns, 3);
    String v = "lance." + ns + ".q";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, body FROM " + docs);
    f.sql("DROP TABLE " + docs);
    MaterializedViewNotFoundException e = assertThrows(MaterializedViewNotFoundException.class,
        () -> f.sql("REFRESH MATERIALIZED VIEW " + v + " WITH (job_id = 'jl-gone')"));
    String expected = "Source table of view " + v + " " + docs + " does not exist";
    assertEquals(expected, e.getMessage());
    List<String> states = new ArrayList<>();
    for (Row r : f.sql("SELECT status, kind, message FROM lance.__system.mv_jobs "
        + "WHERE job_id = 'jl-gone' ORDER BY seq")) {
      states.add(r.getString(0) + " " + r.getString(1) + " " + r.getString(2));
    }
    assertEquals(List.of("RUNNING query null", "FAILED query " + expected), states,
        "the job's records");
  }

  @Test
  void aRerunUnderTheSameJobIdIsShownWithItsOwnOutcome() {
    // a scheduler's retry reuses the job id: the later run's end wins, and the view's commit
    // by the earlier run does not stand for it
    String ns = f.namespace("jlr");
    String docs = docs(ns, 5);
    String v = "lance." + ns + ".q";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, body FROM " + docs
        + " WITH NO DATA");
    assertEquals("DONE", f.sql("REFRESH MATERIALIZED VIEW " + v + " WITH (job_id = 'rerun')")
        .get(0).getString(1));
    assertThrows(MaterializedViewException.class, () -> f.sql("REFRESH MATERIALIZED VIEW " + v
        + " WITH (job_id = 'rerun', src_version = 99)"));
    Row shown = jobRow(f.spark, v, "rerun");
    assertEquals("FAILED", shown.getString(3), shown.toString());
    assertTrue(shown.getString(11).startsWith("src_version 99 does not exist"),
        shown.getString(11));
    assertEquals("FAILED", info("rerun").get("Status"));
  }

  @Test
  void anAsyncRefreshRunsInTheSessionIsSeenRunningFromAnotherAndEqualsASyncOne()
      throws Exception {
    String ns = f.namespace("ja");
    String docs = docs(ns, 120);
    String sync = "lance." + ns + ".sync";
    String async = "lance." + ns + ".async";
    for (String v : List.of(sync, async)) {
      f.sql("CREATE MATERIALIZED VIEW " + v + " USING CHUNKER '" + SlowWords.class.getName()
          + "' OPTIONS (input_columns = 'body') AS SELECT id, body FROM " + docs
          + " WITH NO DATA");
    }
    Row s = f.sql("REFRESH MATERIALIZED VIEW " + sync + " WITH (source_task_size = 4)").get(0);
    long t0 = System.nanoTime();
    Row a = f.sql("REFRESH MATERIALIZED VIEW " + async
        + " ASYNC WITH (source_task_size = 4, job_id = 'ja-async')").get(0);
    assertEquals(List.of("ja-async", "RUNNING", "chunker"), List.of(a.get(0), a.get(1), a.get(2)));
    assertTrue(System.nanoTime() - t0 < s.getLong(7) * 1_000_000L,
        "ASYNC returned before a refresh of the same work could have finished");

    SparkSession other = secondSession();
    Row seen = jobRow(other, async, "ja-async");
    assertEquals("RUNNING", seen.getString(3), "the second session reads the log: " + seen);
    await("the ASYNC job to end", 120, () -> {
      Row r = jobRow(other, async, "ja-async");
      return r != null && !"RUNNING".equals(r.getString(3));
    });
    Row end = jobRow(other, async, "ja-async");
    assertEquals(List.of("DONE", s.get(3), s.get(4), s.get(5), s.get(6)),
        List.of(end.get(3), end.get(4), end.get(8), end.get(9), end.get(10)));
    assertTrue(end.getString(7).matches("\\d+/\\d+ tasks, \\d+ rows/s"), end.getString(7));
    assertEquals(f.rows("SELECT __source_row_id, __child_index, * FROM " + sync),
        f.rows("SELECT __source_row_id, __child_index, * FROM " + async));
  }

  @Test
  void cancelStopsALongChunkerRefreshAndCommitsNothing() throws Exception {
    String v = slowView("jc", 400);
    List<String> before = f.rows("SELECT * FROM " + v);
    String describeBefore = f.rows("DESCRIBE MATERIALIZED VIEW " + v).toString();
    f.sql("REFRESH MATERIALIZED VIEW " + v + " ASYNC WITH (source_task_size = 2, "
        + "job_id = 'jc-long')");
    await("the refresh's Spark tasks to start", 60, () -> {
      JobRecord r = f.views().job("jc-long");
      return r.itemsTotal() > 0;
    });

    Row c = f.sql("CANCEL JOB 'jc-long' IN lance").get(0);
    assertEquals("CANCELLED", c.getString(3), c.toString());
    assertEquals("Refresh of view " + v + " (job jc-long) was cancelled by CANCEL JOB; nothing "
        + "was committed, the view is as it was", c.getString(11));
    assertEquals(before, f.rows("SELECT * FROM " + v));
    assertEquals(describeBefore, f.rows("DESCRIBE MATERIALIZED VIEW " + v).toString());
    assertEquals("CANCELLED", jobRow(secondSession(), v, "jc-long").getString(3));
  }

  /**
   * The log's maintenance (after jobs end, and every few heartbeats while one runs) can take long
   * on an object store: it must not hold up the heartbeats of the jobs running meanwhile, which
   * the heartbeat thread of the configuration records for every session (a job without one for
   * the heartbeat timeout is shown FAILED, driver lost). Here the log's lock is held, as a
   * stalled store call would hold its maintenance.
   */
  @Test
  void aStalledMaintenanceOfTheLogHoldsUpNoHeartbeat() throws Exception {
    String v = slowView("jm", 600);
    JobsTable log = JobService.of(f.spark, CatalogBinding.of(f.spark, "lance")).table();
    log.writable("The job log of this test", null); // created before it is held
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch unstall = new java.util.concurrent.CountDownLatch(1);
    Thread staller = new Thread(() -> {
      synchronized (log) { // JobsTable.maintain is synchronized: every maintenance waits here
        held.countDown();
        try {
          unstall.await(120, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }, "stalled object store");
    staller.start();
    try {
      assertTrue(held.await(10, java.util.concurrent.TimeUnit.SECONDS));
      f.sql("REFRESH MATERIALIZED VIEW " + v + " ASYNC WITH (source_task_size = 2, "
          + "job_id = 'jm-long')");
      // 500 ms heartbeats: a maintenance is due at the 6th beat of a running job at the latest
      await("a maintenance of the log to be stalled", 30, () -> stalledMaintenance() != null);
      long first = heartbeatAt(log, "jm-long");
      Thread.sleep(2_000);
      JobRecord now = log.latest().stream().filter(r -> r.jobId().equals("jm-long"))
          .findFirst().orElseThrow();
      assertEquals(JobStatus.RUNNING, now.status(), "the refresh still ran: " + now);
      assertTrue(now.heartbeatAt() >= first + 1_000, "the job's heartbeats went on while the "
          + "maintenance was stalled (" + stalledMaintenance() + "): " + first + " then "
          + now.heartbeatAt());
    } finally {
      unstall.countDown();
      staller.join(10_000);
      if (f.views().job("jm-long").status() == JobStatus.RUNNING) {
        f.sql("CANCEL JOB 'jm-long' IN lance");
      }
    }
  }

  /** The thread waiting in the log's maintenance for the log's lock, or null. */
  private static Thread stalledMaintenance() {
    return Thread.getAllStackTraces().entrySet().stream()
        .filter(e -> e.getKey().getState() == Thread.State.BLOCKED && java.util.Arrays.stream(
            e.getValue()).anyMatch(f -> f.getClassName().equals(JobsTable.class.getName())
                && f.getMethodName().equals("maintain")))
        .map(Map.Entry::getKey).findFirst().orElse(null);
  }

  private static long heartbeatAt(JobsTable log, String jobId) {
    return log.latest().stream().filter(r -> r.jobId().equals(jobId)).findFirst()
        .orElseThrow(() -> new AssertionError("job " + jobId + " is not in the log"))
        .heartbeatAt();
  }

  /**
   * Closing a catalog (or the end of the SparkContext) leaves nothing RUNNING that never ran:
   * the ASYNC refreshes still waiting for a thread end CANCELLED, saying why.
   */
  @Test
  void aQueuedAsyncRefreshEndsCancelledWhenItsCatalogIsClosedBeforeItStarts() throws Exception {
    String v = slowView("jq", 400);
    SparkSession s = secondSession();
    s.conf().set(JobService.ASYNC_THREADS_CONF, "1");
    s.sql("REFRESH MATERIALIZED VIEW " + v + " ASYNC WITH (source_task_size = 2, "
        + "job_id = 'jq-running')").collect();
    s.sql("REFRESH MATERIALIZED VIEW " + v + " ASYNC WITH (job_id = 'jq-queued')").collect();
    assertEquals("RUNNING", jobRow(f.spark, v, "jq-queued").getString(3));

    // the second session's own instance; f.spark's stays open
    ((java.io.Closeable) s.sessionState().catalogManager().catalog("lance")).close();

    Row queued = jobRow(f.spark, v, "jq-queued");
    assertEquals("CANCELLED", queued.getString(3), queued.toString());
    assertEquals("ASYNC refresh job jq-queued did not run: its catalog was closed before it "
        + "started; nothing was refreshed. Run the refresh again in a running session",
        queued.getString(11));
    await("the running refresh, cancelled by the close, to end", 60,
        () -> !"RUNNING".equals(jobRow(f.spark, v, "jq-running").getString(3)));
  }

  @Test
  void refreshesAServiceLeftWaitingAreFailedWhenTheServiceStartsAgain() {
    JobsTable log = JobService.of(f.spark, CatalogBinding.of(f.spark, "lance")).table();
    long then = System.currentTimeMillis() - 60_000;
    List<String> view = List.of("queued", "v");
    log.append(List.of(
        new JobRecord("left-1", view, null, JobStatus.SUBMITTED, null, then, null, then, 0, 0,
            0, 0, 0, 0, "waiting for a free refresh slot", "app-before", "service", then * 1000),
        new JobRecord("left-2", view, null, JobStatus.SUBMITTED, null, then, null, then, 0, 0,
            0, 0, 0, 0, null, "app-before", "someone", then * 1000)));
    QueuedJobs queued = QueuedJobs.of(f.spark, "lance");
    assertEquals(1, queued.failLeftOver("the service restarted"), "only the service's own");
    Row failed = jobRow(f.spark, "lance.queued.v", "left-1");
    assertEquals("FAILED", failed.getString(3));
    assertEquals("the service restarted", failed.getString(11));
    assertEquals("SUBMITTED", jobRow(f.spark, "lance.queued.v", "left-2").getString(3));
    assertEquals(0, queued.failLeftOver("again"), "nothing left the second time");

    queued.submitted("wait-1", view, "service", System.currentTimeMillis());
    assertEquals("SUBMITTED", jobRow(f.spark, "lance.queued.v", "wait-1").getString(3));
    queued.endedWaiting("wait-1", view, "service", System.currentTimeMillis(),
        JobStatus.CANCELLED, "cancelled before it started (CANCEL JOB)");
    Row cancelled = jobRow(f.spark, "lance.queued.v", "wait-1");
    assertEquals("CANCELLED", cancelled.getString(3));
    assertEquals(0, queued.failLeftOver("again"), "an ended one is not failed");
  }

  @Test
  void aRunningJobOfALostDriverIsShownFailedAndOneOfAnotherAppCannotBeCancelled()
      throws Exception {
    JobsTable log = JobService.of(f.spark, CatalogBinding.of(f.spark, "lance")).table();
    long now = System.currentTimeMillis();
    List<String> view = List.of("elsewhere", "v");
    log.append(List.of(
        new JobRecord("lost-1", view, "query", JobStatus.RUNNING, 4L, now - 600_000, null,
            now - 500_000, 1, 4, 10, 0, 0, 0, null, "app-gone", "someone", 1),
        new JobRecord("alive-1", view, "query", JobStatus.RUNNING, 4L, now - 1000, null,
            now, 1, 4, 10, 0, 0, 0, null, "app-other", "someone", 1)));
    Row lost = jobRow(f.spark, "lance.elsewhere.v", "lost-1");
    assertEquals("FAILED", lost.getString(3));
    assertTrue(lost.getString(11).startsWith("driver lost: no heartbeat since "
        + java.time.Instant.ofEpochMilli(now - 500_000) + ", more than 120 s ago ("
        + JobService.HEARTBEAT_TIMEOUT_CONF + ")"), lost.getString(11));
    assertEquals("RUNNING", jobRow(f.spark, "lance.elsewhere.v", "alive-1").getString(3));

    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> f.sql("CANCEL JOB 'alive-1' IN lance"));
    assertEquals("Job 'alive-1' of view elsewhere.v runs in Spark application app-other, not "
        + "in this one (" + f.spark.sparkContext().applicationId() + "): CANCEL JOB stops jobs "
        + "of this application only. Cancel it from that application, or stop that "
        + "application; its job is then shown FAILED (driver lost) once its heartbeat is older "
        + "than spark.lancerest.mv.jobs.heartbeatTimeout", e.getMessage());
  }

  @Test
  void showJobsPagesPastAThousandJobsNewestFirst() throws Exception {
    JobsTable log = JobService.of(f.spark, CatalogBinding.of(f.spark, "lance")).table();
    List<String> view = List.of("paging", "v");
    long base = System.currentTimeMillis() - 10_000_000L;
    for (int batch = 0; batch < 12; batch++) {
      List<JobRecord> states = new ArrayList<>();
      for (int i = batch * 100; i < (batch + 1) * 100; i++) {
        long t = base + i * 1000L;
        states.add(new JobRecord(String.format("page-%04d", i), view, "query",
            JobStatus.RUNNING, (long) i, t, null, t, 0, 0, 0, 0, 0, 0, null, "app-x", "u", 1));
        states.add(new JobRecord(String.format("page-%04d", i), view, "query",
            JobStatus.DONE, (long) i, t, t + 500, t + 500, 2, 2, 7, i, 0, 0, null, "app-x",
            "u", 2));
      }
      log.append(states);
    }
    long t0 = System.nanoTime();
    List<Row> all = f.sql("SHOW JOBS IN lance FOR lance.paging.v");
    List<Row> page = f.sql("SHOW JOBS FOR lance.paging.v LIMIT 1100");
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(1200, all.size());
    assertEquals(1100, page.size());
    assertEquals("page-1199", page.get(0).getString(0));
    assertEquals("page-0100", page.get(1099).getString(0));
    assertTrue(all.stream().allMatch(r -> "DONE".equals(r.getString(3))), "latest state wins");
    assertEquals(1199L, page.get(0).getLong(8));
    assertNull(all.get(0).get(11));
    assertTrue(ms < 20_000, "two SHOW JOBS over 2,400 log rows took " + ms + " ms");
  }

  /**
   * Every commit to the log lists its versions, so the log drops the ones replaced longer ago
   * than its retention at each of its maintenance runs, also when there is nothing to compact:
   * the newest {@value JobsTable#KEEP_LATEST} stay whatever their age, and every job stays listed.
   */
  @Test
  void theLogDropsReplacedVersionsWithoutACompaction() throws Exception {
    JobsTable log = JobService.of(f.spark, CatalogBinding.of(f.spark, "lance")).table();
    List<String> view = List.of("versions", "v");
    long t = System.currentTimeMillis();
    int appends = JobsTable.KEEP_LATEST + 4;
    // the earlier tests' appends merged first, so that these few stay below the compaction bound
    String at = log.writable("Compacting the log is refused", null).location();
    try (org.apache.arrow.memory.BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(at, a)) {
      ds.compact();
    }
    for (int i = 0; i < appends; i++) {
      log.append(List.of(new JobRecord("versions-" + i, view, "query", JobStatus.DONE, (long) i,
          t, t + 1, t + 1, 1, 1, 1, i, 0, 0, null, "app-v", "u", 1)));
    }
    CatalogBinding.TableLocation loc = log.location();
    long latest;
    List<Long> before;
    try (org.apache.arrow.memory.BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(loc.location(), a)) {
      assertTrue(ds.getFragments().size() <= JobsTable.COMPACT_ABOVE_FRAGMENTS);
      latest = ds.version();
      before = versionIds(ds);
    }
    List<Long> appended = java.util.stream.LongStream.rangeClosed(latest - appends + 1, latest)
        .boxed().toList();
    assertTrue(before.containsAll(appended), before + " holds the appends' " + appended);
    // A long retention keeps them (they were all replaced just now).
    log.maintain(java.time.Duration.ofHours(1), KEEP_ALL);
    try (org.apache.arrow.memory.BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(loc.location(), a)) {
      List<Long> kept = versionIds(ds);
      assertTrue(kept.containsAll(appended), kept + " kept every append's version");
    }
    Thread.sleep(20);
    log.maintain(java.time.Duration.ofMillis(10), KEEP_ALL);
    try (org.apache.arrow.memory.BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(loc.location(), a)) {
      List<Long> ids = versionIds(ds);
      assertEquals(latest - JobsTable.KEEP_LATEST + 1, ids.get(0),
          "only the newest " + JobsTable.KEEP_LATEST + " versions stay: " + ids);
    }
    List<Row> jobs = f.sql("SHOW JOBS IN lance FOR lance.versions.v");
    assertEquals(appends, jobs.size());
  }

  /**
   * The log's version ids. The session's job service also maintains the log, on its maintenance
   * thread after jobs end, and a cleanup there can remove a manifest while this lists them
   * (lance-core then fails the listing with an IOException): such a listing is tried again, at
   * most 5 times.
   */
  private static List<Long> versionIds(org.lance.Dataset ds) throws InterruptedException {
    Exception last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        return ds.listVersions().stream().map(org.lance.Version::getId).sorted().toList();
      } catch (Exception e) { // lance-core's IOException is thrown undeclared
        last = e;
        Thread.sleep(50);
      }
    }
    throw new AssertionError("listing the job log's versions failed 5 times", last);
  }

  @Test
  void theLogCompactsItselfAndDropsItsOldVersionsKeepingEveryJob() throws Exception {
    JobsTable log = JobService.of(f.spark, CatalogBinding.of(f.spark, "lance")).table();
    List<String> view = List.of("compacting", "v");
    long t = System.currentTimeMillis() - 1_000_000L;
    for (int i = 0; i < JobsTable.COMPACT_ABOVE_FRAGMENTS + 6; i++) { // one fragment each
      log.append(List.of(new JobRecord(String.format("compact-%03d", i), view, "query",
          JobStatus.DONE, (long) i, t, t + 1, t + 1, 1, 1, 1, i, 0, 0, null, "app-c", "u", 1)));
    }
    String table = "lance.__system.mv_jobs";
    long fragmentsBefore = f.spark.sql("SELECT count(DISTINCT _fragid) FROM " + table).first()
        .getLong(0);
    assertTrue(fragmentsBefore > JobsTable.COMPACT_ABOVE_FRAGMENTS, fragmentsBefore + " fragments");
    // a version of the log before the compaction, readable now
    assertTrue(f.spark.sql("SELECT count(*) FROM " + table + " VERSION AS OF 2").first()
        .getLong(0) > 0);

    log.maintain(java.time.Duration.ZERO, KEEP_ALL);

    long fragmentsAfter = f.spark.sql("SELECT count(DISTINCT _fragid) FROM " + table).first()
        .getLong(0);
    assertTrue(fragmentsAfter < 8, fragmentsAfter + " fragments after the compaction");
    Exception gone = assertThrows(Exception.class,
        () -> f.spark.sql("SELECT count(*) FROM " + table + " VERSION AS OF 2").collect());
    assertTrue(gone.getMessage().contains("version 2"), gone.getMessage());
    List<Row> jobs = f.sql("SHOW JOBS IN lance FOR lance.compacting.v");
    assertEquals(JobsTable.COMPACT_ABOVE_FRAGMENTS + 6, jobs.size());
    assertTrue(jobs.stream().allMatch(r -> "DONE".equals(r.getString(3))));
  }
}
