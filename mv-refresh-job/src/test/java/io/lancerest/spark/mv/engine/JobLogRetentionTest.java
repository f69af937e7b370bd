package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * The job log's retention ({@link JobLogRetention}) on real logs: each test has a log table of its
 * own, which the fixture's job service never maintains (it maintains {@code mv_jobs}).
 */
class JobLogRetentionTest {
  private static final long DAY = 86_400_000L;
  private static final long HOUR = 3_600_000L;
  /** The defaults: 30 days, 1,000 jobs per view. */
  private static final JobLogRetention RETENTION = new JobLogRetention(Duration.ofDays(30),
      1000);
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static JobsTable log(String table) {
    return new JobsTable(CatalogBinding.of(f.spark, EngineFixture.CATALOG),
        JobsTable.DEFAULT_NAMESPACE, table, JobService.retention(f.spark));
  }

  private static JobRecord state(String job, String view, JobStatus s, long startedAt,
      Long finishedAt, long heartbeatAt, long seq) {
    return new JobRecord(job, List.of("ret", view), "query", s, 1L, startedAt, finishedAt,
        heartbeatAt, 1, 1, 1, 0, 0, 0, null, "app-ret", "u", seq);
  }

  /** A job that ran from {@code end - 1 s} to {@code end}: RUNNING, then {@code status}. */
  private static List<JobRecord> ran(String job, String view, JobStatus status, long end) {
    return List.of(state(job, view, JobStatus.RUNNING, end - 1000, null, end - 1000, 1),
        state(job, view, status, end - 1000, end, end, 2));
  }

  /** The rows of each job in the table, read through Spark (every row, every state). */
  private static Map<String, Long> rowsPerJob(String table) {
    Map<String, Long> out = new TreeMap<>();
    for (Row r : f.spark.sql("SELECT job_id, count(*) FROM lance." + JobsTable.DEFAULT_NAMESPACE
        + "." + table + " GROUP BY job_id").collectAsList()) {
      out.put(r.getString(0), r.getLong(1));
    }
    return out;
  }

  private static Map<String, JobStatus> latest(JobsTable log) {
    return log.latest().stream().collect(Collectors.toMap(JobRecord::jobId, JobRecord::status,
        (a, b) -> a, TreeMap::new));
  }

  private static int fragments(JobsTable log) {
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(log.location().location(), a)) {
      return ds.getFragments().size();
    }
  }

  @Test
  void maintenanceDeletesEveryRowOfOldAndSurplusEndedJobsAndKeepsUnendedOnes() {
    JobsTable log = log("ret_mixed");
    long now = System.currentTimeMillis();
    List<List<JobRecord>> appends = new ArrayList<>();
    // older than the retention (30 days), by their end or, without one, their last heartbeat
    appends.add(ran("old-done", "a", JobStatus.DONE, now - 40 * DAY));
    appends.add(ran("old-cancelled", "b", JobStatus.CANCELLED, now - 31 * DAY));
    appends.add(List.of(state("old-failed", "a", JobStatus.FAILED, now - 41 * DAY, null,
        now - 40 * DAY, 1)));
    // not ended, however old: a lost driver's job, a job waiting, a re-run of an ended job id
    appends.add(List.of(state("old-running", "a", JobStatus.RUNNING, now - 100 * DAY, null,
        now - 100 * DAY, 1), state("old-running", "a", JobStatus.RUNNING, now - 100 * DAY,
        null, now - 99 * DAY, 2)));
    appends.add(List.of(state("old-submitted", "a", JobStatus.SUBMITTED, now - 50 * DAY, null,
        now - 50 * DAY, 1)));
    appends.add(ran("rerun", "a", JobStatus.DONE, now - 60 * DAY));
    appends.add(List.of(state("rerun", "a", JobStatus.RUNNING, now - 45 * DAY, null,
        now - 45 * DAY, 3)));
    // recent: view a has 5 ended jobs (the newest 3 are kept), view b 2
    JobStatus[] ends = {JobStatus.DONE, JobStatus.PARTIAL, JobStatus.SKIPPED, JobStatus.FAILED,
        JobStatus.DONE};
    for (int i = 1; i <= 5; i++) {
      appends.add(ran("a-" + i, "a", ends[i - 1], now - i * HOUR));
    }
    appends.add(ran("b-1", "b", JobStatus.DONE, now - HOUR));
    appends.add(ran("b-2", "b", JobStatus.FAILED, now - 2 * HOUR));
    // one append per state: more fragments than the compaction bound, so maintenance prunes
    for (List<JobRecord> states : appends) {
      for (JobRecord s : states) {
        log.append(List.of(s));
      }
    }
    assertTrue(fragments(log) > JobsTable.COMPACT_ABOVE_FRAGMENTS, fragments(log) + " fragments");
    Map<String, Long> before = rowsPerJob("ret_mixed");
    assertEquals(13, before.size(), before.toString());

    log.maintain(Duration.ofHours(1), new JobLogRetention(Duration.ofDays(30), 3));

    Map<String, JobStatus> expected = new TreeMap<>(Map.of("old-running", JobStatus.RUNNING,
        "old-submitted", JobStatus.SUBMITTED, "rerun", JobStatus.RUNNING,
        "a-1", JobStatus.DONE, "a-2", JobStatus.PARTIAL, "a-3", JobStatus.SKIPPED,
        "b-1", JobStatus.DONE, "b-2", JobStatus.FAILED));
    assertEquals(expected, latest(log));
    Map<String, Long> kept = new TreeMap<>(before);
    kept.keySet().retainAll(expected.keySet());
    assertEquals(kept, rowsPerJob("ret_mixed"), "every row of a kept job stays, of a pruned one "
        + "none (the re-run keeps its earlier DONE rows too)");
    assertTrue(fragments(log) <= 2, "compacted after the prune: " + fragments(log));

    // Nothing more is due: the next maintenance deletes nothing, and the log stays as it is.
    for (int i = 0; i <= JobsTable.COMPACT_ABOVE_FRAGMENTS; i++) {
      log.append(List.of(state("b-new-" + i, "b", JobStatus.RUNNING, now, null, now, 1)));
    }
    log.maintain(Duration.ofHours(1), new JobLogRetention(Duration.ofDays(30), 3));
    assertEquals(expected.size() + JobsTable.COMPACT_ABOVE_FRAGMENTS + 1, latest(log).size());
  }

  @Test
  void belowTheCompactionBoundMaintenanceLeavesThePruningForLater() {
    JobsTable log = log("ret_few");
    long now = System.currentTimeMillis();
    log.append(ran("few-old", "a", JobStatus.DONE, now - 40 * DAY));
    log.append(ran("few-new", "a", JobStatus.DONE, now));
    log.maintain(Duration.ofHours(1), RETENTION);
    assertEquals(Map.of("few-old", 2L, "few-new", 2L), rowsPerJob("ret_few"));
  }

  /** A new log of two ended jobs of view a: {@code old} ended 40 days ago, {@code recent} now. */
  private static JobsTable oldAndRecent(String table, String old, String recent, long now) {
    JobsTable log = log(table);
    log.append(ran(old, "a", JobStatus.DONE, now - 40 * DAY));
    log.append(ran(recent, "a", JobStatus.DONE, now));
    return log;
  }

  /**
   * Another driver appends while a prune decides: a new state of a job the prune deletes (a
   * re-run under its id) and an old job the decision did not see. The commit is on the version
   * it decided on, so both appends stay.
   */
  @Test
  void statesAppendedAfterTheDecisionStay() throws Exception {
    long now = System.currentTimeMillis();
    JobsTable log = oldAndRecent("ret_race", "race-old", "race-kept", now);
    try (BufferAllocator a = new RootAllocator();
        Dataset decided = Dataset.open(log.location().location(), a)) {
      log.append(List.of(state("race-old", "a", JobStatus.RUNNING, now, null, now, 3)));
      log.append(ran("race-late", "a", JobStatus.DONE, now - 40 * DAY));
      assertEquals(new JobLogRetention.Pruned(1, 2), RETENTION.pruneAt(decided, now));
    }
    assertEquals(Map.of("race-old", JobStatus.RUNNING, "race-kept", JobStatus.DONE,
        "race-late", JobStatus.DONE), latest(log));
    assertEquals(Map.of("race-old", 1L, "race-kept", 2L, "race-late", 2L),
        rowsPerJob("ret_race"));
  }

  /**
   * A compaction by another driver between the decision and the commit: the delete cannot be
   * rebased on rewritten fragments, so that attempt fails, and the prune decides again on the
   * compacted log.
   */
  @Test
  void aPruneThatMeetsACompactionDecidesAgain() throws Exception {
    long now = System.currentTimeMillis();
    JobsTable log = oldAndRecent("ret_compacted", "cmp-old", "cmp-new", now);
    String location = log.location().location();
    try (BufferAllocator a = new RootAllocator();
        Dataset decided = Dataset.open(location, a)) {
      try (Dataset other = Dataset.open(location, a)) {
        other.compact();
      }
      assertThrows(Exception.class, () -> RETENTION.pruneAt(decided, now));
      assertEquals(Map.of("cmp-old", 2L, "cmp-new", 2L), rowsPerJob("ret_compacted"));
      assertEquals(new JobLogRetention.Pruned(1, 2),
          RETENTION.prune(() -> Dataset.open(location, a), now, "ret_compacted"));
    }
    assertEquals(Map.of("cmp-new", 2L), rowsPerJob("ret_compacted"));
  }

  @Test
  void badRetentionConfsAreRefusedNamingTheConfAndWhatToGive() {
    SparkSession s = f.sessionWith(new LanceRestSparkExtensions(),
        new LanceSparkSessionExtensions());
    Map<String, String[]> bad = new java.util.LinkedHashMap<>();
    bad.put("soon", new String[] {JobService.RETENTION_CONF, "spark.lancerest.mv.jobs.retention "
        + "must be a duration such as 30d or 12h, got 'soon'"});
    bad.put("0d", new String[] {JobService.RETENTION_CONF, "spark.lancerest.mv.jobs.retention "
        + "must be a duration longer than zero such as 30d or 12h (how long an ended job stays "
        + "in the job log), got '0d'"});
    String keep = "spark.lancerest.mv.jobs.keepPerView must be a whole number from 1 to "
        + "2147483647 (the ended jobs of each view the job log keeps), got '";
    bad.put("0", new String[] {JobService.KEEP_PER_VIEW_CONF, keep + "0'"});
    bad.put("lots", new String[] {JobService.KEEP_PER_VIEW_CONF, keep + "lots'"});
    bad.put("1.5", new String[] {JobService.KEEP_PER_VIEW_CONF, keep + "1.5'"});
    for (Map.Entry<String, String[]> e : bad.entrySet()) {
      String conf = e.getValue()[0];
      s.conf().set(conf, e.getKey());
      InvalidOptionException thrown = assertThrows(InvalidOptionException.class,
          () -> s.sql("SHOW JOBS IN lance").collectAsList(), conf + " = " + e.getKey());
      assertEquals(e.getValue()[1], thrown.getMessage());
      s.conf().unset(conf);
    }
    s.conf().set(JobService.RETENTION_CONF, "12h");
    s.conf().set(JobService.KEEP_PER_VIEW_CONF, "7");
    JobLogRetention r = JobService.retention(s);
    assertEquals(List.of(Duration.ofHours(12), 7), List.of(r.maxAge(), r.keepPerView()));
    JobLogRetention dflt = JobService.retention(f.spark);
    assertEquals(List.of(Duration.ofDays(30), 1000), List.of(dflt.maxAge(), dflt.keepPerView()));
  }
}
