package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The rules of the one refresh sequence, run against every kind through the public API: the
 * same {@code src_version} rules and words, SKIPPED with no commit, {@code force}, a commit
 * conflict computed again, the job group and description of its Spark jobs with the caller's put
 * back, and {@code last_job}. {@link KindRulesTest} has the other rules.
 */
class RefreshContractTest {
  static EngineFixture f;
  private static SparkListener listener;
  /** Descriptions of the Spark jobs started while a test listens. */
  static final List<String> DESCRIPTIONS = new CopyOnWriteArrayList<>();
  /** Their job groups and tags. */
  static final List<String> GROUPS = new CopyOnWriteArrayList<>();
  static final List<String> TAGS = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
    listener = new SparkListener() {
      @Override
      public void onJobStart(SparkListenerJobStart start) {
        String d = start.properties() == null ? null
            : start.properties().getProperty("spark.job.description");
        DESCRIPTIONS.add(String.valueOf(d));
        GROUPS.add(String.valueOf(start.properties() == null ? null
            : start.properties().getProperty("spark.jobGroup.id")));
        TAGS.add(String.valueOf(start.properties() == null ? null
            : start.properties().getProperty("spark.job.tags")));
      }
    };
    f.spark.sparkContext().addSparkListener(listener);
  }

  @AfterAll
  static void stop() {
    f.spark.sparkContext().removeSparkListener(listener);
    f.close();
  }

  private record View(String ns, String source, String name) {
    List<String> id() {
      return List.of(ns, "v");
    }
  }

  private static View view(ListedKind kind) {
    String ns = kind.namespaceWithSource(f, "rc");
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " " + kind.over("lance." + ns + ".src"));
    return new View(ns, "lance." + ns + ".src", v);
  }

  private static void change(View v, int from) {
    f.sql("INSERT INTO " + v.source() + " SELECT id, CAST(id % 3 AS STRING), concat('n', "
        + "CAST(id AS STRING), ' g h'), CAST(id % 7 AS INT) FROM range(" + from + ", "
        + (from + 10) + ")");
    f.sql("DELETE FROM " + v.source() + " WHERE id = " + (from - 37));
  }

  private static long viewVersion(View v) {
    return Long.parseLong(f.sql("SHOW TBLPROPERTIES " + v.name() + " ('current-version')")
        .get(0).getString(1));
  }

  private static long sourceVersion(View v) {
    return Long.parseLong(f.sql("SHOW TBLPROPERTIES " + v.source() + " ('current-version')")
        .get(0).getString(1));
  }

  private static String describe(View v, String info) {
    return f.sql("DESCRIBE MATERIALIZED VIEW " + v.name()).stream()
        .filter(r -> r.getString(0).equals(info)).map(r -> r.getString(1)).findFirst()
        .orElseThrow(() -> new AssertionError("DESCRIBE has no '" + info + "'"));
  }

  private static RefreshOptions srcVersion(long v) {
    return new RefreshOptions(v, null, null, null, null, null, null, null, null, false);
  }

  private static RefreshOptions jobId(String id, boolean force) {
    return new RefreshOptions(null, null, null, null, null, null, null, null, id, force);
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void srcVersionMustExistAndNeverGoBackwardsInTheSameWordsForEveryKind(ListedKind kind) {
    View v = view(kind);
    change(v, 100);
    long latest = sourceVersion(v);
    long version = viewVersion(v);
    for (long bad : new long[] {latest + 5, 0}) {
      InvalidOptionException e = assertThrows(InvalidOptionException.class,
          () -> f.views().refresh(v.id(), srcVersion(bad)));
      assertEquals("src_version " + bad + " does not exist: the source of view " + v.name()
          + " is at version " + latest + " (give 1 to " + latest + ", or omit src_version for "
          + "the latest)", e.getMessage());
    }
    assertEquals(RefreshResult.JobStatus.DONE, f.views().refresh(v.id(),
        RefreshOptions.DEFAULTS).status());
    InvalidOptionException back = assertThrows(InvalidOptionException.class,
        () -> f.views().refresh(v.id(), srcVersion(latest - 1)));
    assertEquals("src_version " + (latest - 1) + " is older than the version view " + v.name()
        + " already reflects (" + latest + "); a view cannot be refreshed backwards. Omit "
        + "src_version or give " + latest + " or later", back.getMessage());
    assertEquals(version + 1, viewVersion(v), "only the good refresh committed");
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aViewAtTheSourceVersionIsSkippedWithoutACommitAndForceRebuildsIt(ListedKind kind) {
    View v = view(kind);
    List<String> rows = f.rows("SELECT * FROM " + v.name());
    long version = viewVersion(v);
    RefreshResult again = f.views().refresh(v.id(), RefreshOptions.DEFAULTS);
    assertEquals(RefreshResult.JobStatus.SKIPPED, again.status());
    assertEquals(kind == ListedKind.AGGREGATE ? "QUERY" : kind.name(), again.kind().name(),
        "an aggregate view is a query view");
    assertEquals(version, viewVersion(v), "no commit");
    RefreshResult forced = f.views().refresh(v.id(), jobId("forced-" + kind, true));
    assertEquals(RefreshResult.JobStatus.DONE, forced.status());
    assertEquals(version + 1, viewVersion(v));
    // the kind's own counts, in the one result type
    switch (kind) {
      case QUERY, AGGREGATE -> assertEquals(Map.of(), forced.details());
      case CHUNKER -> assertEquals(List.of("parents_expanded", "parents_without_children",
          "parents_removed", "fragments_written"), List.copyOf(forced.details().keySet()));
      case UDTF -> assertEquals(3L, forced.details().get("partitions"), "categories 0, 1, 2");
      default -> throw new IllegalStateException();
    }
    if (kind == ListedKind.CHUNKER) {
      assertEquals(40L, forced.details().get("parents_expanded"), "every parent again");
    }
    assertEquals(rows, f.rows("SELECT * FROM " + v.name()), "the rebuild is the same view");
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aCommitConflictIsComputedAgainFromTheNewViewVersion(ListedKind kind) {
    View v = view(kind);
    change(v, 100);
    long version = viewVersion(v);
    // Just before the first attempt commits, another refresh of the same view commits: the
    // first attempt's commit conflicts, and the next attempt finds the view up to date.
    AtomicBoolean raced = new AtomicBoolean();
    Probes racing = new Probes().beforeCommit(() -> {
      if (raced.compareAndSet(false, true)) {
        // the source moves on, and the racing refresh takes the view there
        change(v, 300);
        assertEquals(RefreshResult.JobStatus.DONE, f.views().refresh(v.id(),
            RefreshOptions.DEFAULTS).status());
      }
    });
    RefreshResult r = f.views().refresh(v.id(), RefreshOptions.DEFAULTS, racing);
    assertTrue(raced.get(), "the racing refresh ran");
    assertEquals(RefreshResult.JobStatus.SKIPPED, r.status(), "computed again at the latest "
        + "source version: nothing left");
    assertEquals(sourceVersion(v), r.sourceVersion());
    assertEquals(version + 1, viewVersion(v), "one commit, the racing refresh's");
    List<String> converged = f.rows("SELECT * FROM " + v.name());
    f.views().refresh(v.id(), jobId(null, true));
    assertEquals(f.rows("SELECT * FROM " + v.name()), converged, "equals a rebuild");
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void itsSparkJobsAreNamedForTheViewAndTheCallersJobGroupComesBack(ListedKind kind)
      throws Exception {
    View v = view(kind);
    change(v, 100);
    org.apache.spark.SparkContext sc = f.spark.sparkContext();
    sc.setJobGroup("caller-group", "the caller's own jobs", false);
    // a change this small is otherwise written on the driver, without Spark jobs
    f.spark.conf().set("spark.lancerest.mv.query.localRefreshMaxRows", "0");
    f.spark.conf().set("spark.lancerest.mv.chunker.localRefreshMaxParents", "0");
    try {
      sc.listenerBus().waitUntilEmpty(60_000);
      DESCRIPTIONS.clear();
      GROUPS.clear();
      TAGS.clear();
      String job = "contract-" + kind;
      RefreshResult r = f.views().refresh(v.id(), jobId(job, false));
      assertEquals(job, r.jobId());
      sc.listenerBus().waitUntilEmpty(60_000);
      List<String> seen = List.copyOf(DESCRIPTIONS);
      assertFalse(seen.isEmpty(), "the refresh ran Spark jobs");
      String prefix = "REFRESH MATERIALIZED VIEW " + v.name() + " (job " + job + ")";
      assertTrue(seen.stream().allMatch(d -> d.startsWith(prefix)), seen.toString());
      // in the caller's group (cancelling the caller's statement stops the refresh), and
      // tagged with the job id (CANCEL JOB stops it alone)
      assertEquals(List.of("caller-group"), GROUPS.stream().distinct().toList());
      assertTrue(TAGS.stream().allMatch(t -> t.contains("lancerest-refresh-" + job)),
          TAGS.toString());
      assertEquals("caller-group", sc.getLocalProperty("spark.jobGroup.id"));
      assertEquals("the caller's own jobs", sc.getLocalProperty("spark.job.description"));
      assertEquals(null, sc.getLocalProperty("spark.job.tags"), "the refresh's tag is gone");
      String last = describe(v, "Last job");
      assertTrue(last.startsWith("{\"job_id\":\"" + job + "\",\"status\":\"DONE\""), last);
      // without a group of the caller's, the refresh's jobs are in one named by the job id
      sc.clearJobGroup();
      change(v, 200);
      sc.listenerBus().waitUntilEmpty(60_000);
      GROUPS.clear();
      f.views().refresh(v.id(), jobId(job + "-2", false));
      sc.listenerBus().waitUntilEmpty(60_000);
      assertEquals(List.of(job + "-2"), GROUPS.stream().distinct().toList());
      assertEquals(null, sc.getLocalProperty("spark.jobGroup.id"));
    } finally {
      sc.clearJobGroup();
      f.spark.conf().unset("spark.lancerest.mv.query.localRefreshMaxRows");
      f.spark.conf().unset("spark.lancerest.mv.chunker.localRefreshMaxParents");
    }
  }
}
