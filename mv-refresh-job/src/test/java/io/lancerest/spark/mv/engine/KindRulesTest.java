package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.RefreshCancelledException;
import io.lancerest.spark.mv.result.JobRecord;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.lance.Dataset;
import org.lance.Version;
import org.lance.cleanup.CleanupPolicy;
import org.lance.compaction.CompactionOptions;

/**
 * The rules of docs/materialized-views.md that hold for every kind alike, each run against every
 * {@link ListedKind} through the public API: a source replaced under the same name is rebuilt,
 * a failing function reads the same, a refresh with nothing to do is SKIPPED, CANCEL JOB stops
 * it before its commit, the errors table goes with the view on DROP and on a CREATE that
 * rolls back, a cleanup that removed the view's watermark version makes a plain REFRESH rebuild
 * it, and a compaction of the source loses and duplicates no row.
 */
class KindRulesTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private record View(String ns, String source, String name) {
    List<String> id() {
      return List.of(ns, "v");
    }

    List<String> rows() {
      return f.rows("SELECT * FROM " + name);
    }

    long version() {
      return currentVersion(name);
    }

    long sourceVersion() {
      return currentVersion(source);
    }

    RefreshResult refresh(String jobId, boolean force) {
      return f.views().refresh(id(), new RefreshOptions(null, null, null, null, null, null, null,
          null, jobId, force));
    }

    RefreshPlan explain(boolean force) {
      return f.views().explainRefresh(id(), new RefreshOptions(null, null, null, null, null,
          null, null, null, null, force));
    }

    /** The source, opened at its latest version with lance-core. */
    Dataset openSource(BufferAllocator a) {
      return Dataset.open(TableStats.location(f, ns, "src"), a);
    }

    /**
     * The view holds exactly what a view of {@code kind} created now over its source holds
     * (compared as sorted rows: a row lost or twice shows).
     */
    void assertSameAsCreatedNow(ListedKind kind, String fresh) {
      String name = "lance." + ns + "." + fresh;
      f.sql("CREATE MATERIALIZED VIEW " + name + " " + kind.over(source));
      assertEquals(f.rows("SELECT * FROM " + name), rows());
    }
  }

  private static long currentVersion(String table) {
    return Long.parseLong(f.sql("SHOW TBLPROPERTIES " + table + " ('current-version')").get(0)
        .getString(1));
  }

  /** A source of 40 rows and a view of {@code kind} over it. */
  private static View view(ListedKind kind, String prefix) {
    String ns = kind.namespaceWithSource(f, prefix);
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " " + kind.over("lance." + ns + ".src"));
    return new View(ns, "lance." + ns + ".src", v);
  }

  private static void insert(String src, long id, String body) {
    f.sql("INSERT INTO " + src + " VALUES (" + id + ", '" + id % 3 + "', '" + body + "', 5)");
  }

  static Stream<Arguments> replacements() {
    List<Arguments> all = new ArrayList<>();
    for (ListedKind kind : ListedKind.values()) {
      for (boolean force : new boolean[] {false, true}) {
        for (boolean pastWatermark : new boolean[] {false, true}) {
          all.add(Arguments.of(kind, force, pastWatermark));
        }
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0}, force {1}, new versions past the watermark {2}")
  @MethodSource("replacements")
  void aSourceReplacedUnderTheSameNameIsRebuiltInFullFromTheNewTable(ListedKind kind,
      boolean force, boolean pastWatermark) {
    View v = view(kind, "rp");
    for (int i = 0; i < 3; i++) {
      insert(v.source(), 100 + i, "n" + i + " g h");
    }
    assertEquals(JobStatus.DONE, v.refresh(null, false).status());
    long watermark = v.sourceVersion();
    f.sql("DROP TABLE " + v.source() + " PURGE");
    ListedKind.createSource(f, v.source(), 1000);
    for (int i = 0; pastWatermark && v.sourceVersion() <= watermark; i++) {
      insert(v.source(), 2000 + i, "x" + i + " y");
    }
    assertEquals(pastWatermark, v.sourceVersion() > watermark, "new table at version "
        + v.sourceVersion() + ", the view's watermark is " + watermark);

    String job = "replaced-" + kind + "-" + force + "-" + pastWatermark;
    RefreshPlan plan = v.explain(force);
    assertEquals(RefreshPlan.Mode.FULL, plan.mode(), plan.toString());
    assertTrue(plan.reason().startsWith("source replaced: rebuilt"), plan.reason());
    RefreshResult r = v.refresh(job, force);
    assertEquals(JobStatus.DONE, r.status());
    assertEquals(v.sourceVersion(), r.sourceVersion());
    String message = f.views().job(job).message();
    assertTrue(message.startsWith("source replaced: rebuilt (The source table of view "
        + v.name() + " was replaced since the view's last refresh: the view reflects source "
        + "version " + watermark + " written at "), message);
    // exactly what a view created now over the new table holds: nothing of the old table
    v.assertSameAsCreatedNow(kind, "fresh");
    assertEquals(JobStatus.SKIPPED, v.refresh(null, false).status(), "the view now reflects "
        + "the new table");
  }

  /**
   * A cleanup of the source (lance-core's {@code cleanupWithPolicy}) removed the version the
   * view reflects, and the versions after it: what changed since cannot be told, so a plain
   * REFRESH rebuilds the view, and EXPLAIN REFRESH and the job's message say why.
   */
  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aCleanupThatRemovedTheWatermarkVersionMakesAPlainRefreshRebuildTheView(ListedKind kind) {
    View v = view(kind, "cu");
    insert(v.source(), 100, "p q r");
    assertEquals(JobStatus.DONE, v.refresh(null, false).status());
    long watermark = v.sourceVersion();
    insert(v.source(), 101, "s t");
    f.sql("DELETE FROM " + v.source() + " WHERE id IN (3, 100)");
    long latest = v.sourceVersion();
    try (BufferAllocator a = new RootAllocator(); Dataset ds = v.openSource(a)) {
      ds.cleanupWithPolicy(CleanupPolicy.builder().withBeforeVersion(latest).build());
      assertEquals(List.of(latest), ds.listVersions().stream().map(Version::getId).toList(),
          "the cleanup left the latest version only");
    }

    String removed = "source version " + watermark + " (the view's watermark) was removed by "
        + "a cleanup of the source (which no longer lists it; its oldest version is " + latest
        + ")";
    RefreshPlan plan = v.explain(false);
    assertEquals(RefreshPlan.Mode.FULL, plan.mode(), plan.toString());
    assertTrue(plan.reason().startsWith(removed + "; "), plan.reason());
    String job = "cleaned-" + kind;
    RefreshResult r = v.refresh(job, false);
    assertEquals(List.of(JobStatus.DONE, latest), List.of(r.status(), r.sourceVersion()));
    assertEquals(removed, f.views().job(job).message());
    v.assertSameAsCreatedNow(kind, "fresh");
    assertEquals(JobStatus.SKIPPED, v.refresh(null, false).status(), "the view reflects the "
        + "latest version, which is there: no rebuild again");
  }

  /**
   * A compaction of the source (lance-core's {@code Dataset.compact}, deletions materialized)
   * moves rows to new fragments without changing them: an incremental REFRESH, after the
   * compaction alone and after one that also moved new rows and dropped deleted ones, loses
   * no row and duplicates none.
   */
  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aCompactionOfTheSourceLeavesAnIncrementalRefreshEqualToTheViewCreatedNow(
      ListedKind kind) {
    View v = view(kind, "cp");
    for (int i = 0; i < 3; i++) {
      insert(v.source(), 100 + i, "m" + i + " n o");
    }
    f.sql("DELETE FROM " + v.source() + " WHERE id IN (3, 101)");
    assertEquals(JobStatus.DONE, v.refresh(null, false).status());
    compactSource(v);
    RefreshPlan plan = v.explain(false);
    assertEquals(RefreshPlan.Mode.INCREMENTAL, plan.mode(), "a compaction alone: " + plan);
    assertEquals(JobStatus.DONE, v.refresh(null, false).status());
    v.assertSameAsCreatedNow(kind, "fresh1");

    // new rows and deletions, compacted together with rows the view already has
    insert(v.source(), 200, "u v w");
    insert(v.source(), 201, "x y");
    f.sql("DELETE FROM " + v.source() + " WHERE id IN (5, 102)");
    compactSource(v);
    assertEquals(JobStatus.DONE, v.refresh(null, false).status());
    v.assertSameAsCreatedNow(kind, "fresh2");
  }

  /** Compacts the source into one fragment, deletions materialized; asserts it did. */
  private static void compactSource(View v) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = v.openSource(a)) {
      assertTrue(ds.getFragments().size() > 1, "something to compact");
      ds.compact(CompactionOptions.builder().withMaterializeDeletions(true)
          .withMaterializeDeletionsThreshold(0.0f).build());
    }
    try (BufferAllocator a = new RootAllocator(); Dataset ds = v.openSource(a)) {
      assertEquals(1, ds.getFragments().size(), "compacted");
      assertNull(ds.getFragments().get(0).metadata().getDeletionFile(), "deletions materialized");
    }
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aFailingFunctionFailsTheRefreshInTheSameWordsForEveryKind(ListedKind kind) {
    String ns = kind.namespaceWithSource(f, "ff");
    String src = "lance." + ns + ".src";
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " " + kind.failingOver(src));
    List<String> before = f.rows("SELECT * FROM " + v);
    long version = currentVersion(v);
    insert(src, 500, "bad one");

    String job = "failing-" + kind;
    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> f.views().refresh(List.of(ns, "v"), new RefreshOptions(null, null, null, null,
            null, null, null, null, job, false)));
    Matcher m = Pattern.compile("Refresh of view " + Pattern.quote(v) + " \\(job "
        + Pattern.quote(job) + "\\) failed: " + Pattern.quote(kind.function) + " failed (.+?): "
        + "(.+)\\. Nothing was committed; the view is unchanged").matcher(e.getMessage());
    assertTrue(m.matches(), e.getMessage());
    assertEquals(kind.function, e.function());
    assertEquals(m.group(2), e.firstCause());
    assertTrue(e.firstCause().contains("bad body bad one"), "the function's own error comes "
        + "first, not Spark's job failure: " + e.firstCause());
    JobRecord j = f.views().job(job);
    assertEquals(JobStatus.FAILED, j.status());
    assertEquals(e.getMessage(), j.message());
    assertEquals(version, currentVersion(v));
    assertEquals(before, f.rows("SELECT * FROM " + v));
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aRefreshWithNothingToDoIsSkippedWithoutACommit(ListedKind kind) {
    View v = view(kind, "nc");
    long version = v.version();
    String job = "unchanged-" + kind;
    RefreshResult r = v.refresh(job, false);
    assertEquals(List.of(JobStatus.SKIPPED, v.sourceVersion(), 0L, 0L, 0L), List.of(r.status(),
        r.sourceVersion(), r.rowsInserted(), r.rowsDeleted(), r.skipped()));
    assertEquals(version, v.version(), "no commit");
    JobRecord j = f.views().job(job);
    assertEquals(JobStatus.SKIPPED, j.status());
    assertEquals(v.sourceVersion(), j.sourceVersion());
    assertNull(j.message());
  }

  /**
   * SKIPPED means the view holds everything the source version gives it: a view the last
   * refresh left PARTIAL is refreshed again at the same source version, trying what it skipped,
   * and only that.
   */
  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aPartialViewIsNotUpToDateAtTheSameSourceVersion(ListedKind kind) {
    String ns = kind.namespaceWithSource(f, "pa");
    String src = "lance." + ns + ".src";
    insert(src, 500, "bad one");
    String skipping = kind.skippingOver(src);
    View v = new View(ns, src, "lance." + ns + ".v");
    String created = f.sql("CREATE MATERIALIZED VIEW " + v.name() + " "
        + (skipping == null ? kind.over(src) : skipping)).get(0).getString(1);
    long version = v.version();
    RefreshResult again = v.refresh("again-" + kind, false);
    if (skipping == null) {
      assertEquals(List.of("DONE", JobStatus.SKIPPED, version), List.of(created,
          again.status(), v.version()), "a query view has no work items to skip");
      return;
    }
    assertEquals("PARTIAL", created);
    assertEquals(List.of(JobStatus.PARTIAL, 1L, version + 1, 1L), List.of(again.status(),
        again.skipped(), v.version(), kind.itemsTried(again)), "the skipped item was tried "
        + "again, and skipped again; nothing else was computed again (" + again.details() + ")");
    assertEquals(JobStatus.PARTIAL, f.views().job("again-" + kind).status());
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void moreSkipsThanAllowedFailTheRefreshInTheSameWordsForEveryKind(ListedKind kind) {
    String ns = kind.namespaceWithSource(f, "ms");
    String src = "lance." + ns + ".src";
    String strict = kind.skippingNoneOver(src);
    assumeTrue(strict != null, "a query view skips nothing: a failing row fails its refresh");
    View v = new View(ns, src, "lance." + ns + ".v");
    f.sql("CREATE MATERIALIZED VIEW " + v.name() + " " + strict);
    long version = v.version();
    insert(src, 500, "bad one");
    String job = "skips-" + kind;
    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> v.refresh(job, false));
    assertTrue(e.getMessage().matches(Pattern.quote("Refresh of view " + v.name() + " (job "
        + job + ") failed: 1 ") + "(parents|partitions)" + Pattern.quote(" were skipped, more "
        + "than error_handling.max_skip_count = 0; the refresh committed nothing. First "
        + "skipped: ") + "(source row id \\d+|partition \\d): " + Pattern.quote(
        "java.lang.IllegalStateException: bad body bad one")), e.getMessage());
    assertEquals(List.of(JobStatus.FAILED, e.getMessage()), List.of(f.views().job(job).status(),
        f.views().job(job).message()));
    assertEquals(version, v.version());
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void cancelJobStopsTheRefreshBeforeItsCommit(ListedKind kind) {
    View v = view(kind, "cj");
    insert(v.source(), 300, "c d e");
    long version = v.version();
    List<String> before = v.rows();
    String job = "cancelled-" + kind;
    f.spark.conf().set(JobService.CANCEL_WAIT_CONF, "1ms");
    try {
      Probes cancelling = new Probes().beforeCommit(() -> f.views().cancel(job));
      RefreshCancelledException e = assertThrows(RefreshCancelledException.class,
          () -> f.views().refresh(v.id(), new RefreshOptions(null, null, null, null, null, null,
              null, null, job, false), cancelling));
      String said = "Refresh of view " + v.name() + " (job " + job + ") was cancelled by "
          + "CANCEL JOB; nothing was committed, the view is as it was";
      assertEquals(said, e.getMessage());
      JobRecord j = f.views().job(job);
      assertEquals(List.of(JobStatus.CANCELLED, said), List.of(j.status(), j.message()));
    } finally {
      f.spark.conf().unset(JobService.CANCEL_WAIT_CONF);
    }
    assertEquals(version, v.version());
    assertEquals(before, v.rows());
    assertEquals(JobStatus.DONE, v.refresh(null, false).status(), "the next refresh runs");
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void theErrorsTableGoesWithTheViewOnDropAndOnACreateThatRollsBack(ListedKind kind) {
    String ns = kind.namespaceWithSource(f, "et");
    String src = "lance." + ns + ".src";
    insert(src, 500, "bad one");

    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".failed "
            + kind.failingOver(src)));
    assertTrue(e.getMessage().contains("Materialized view lance." + ns + ".failed was not "
        + "created"), e.getMessage());
    assertEquals(List.of(), left(ns, "failed"), "a CREATE that rolls back leaves nothing");

    String skipping = kind.skippingOver(src);
    String kept = "lance." + ns + ".kept";
    String status = f.sql("CREATE MATERIALIZED VIEW " + kept + " "
        + (skipping == null ? kind.over(src) : skipping)).get(0).getString(1);
    if (skipping != null) {
      assertEquals("PARTIAL", status);
      assertEquals(List.of("kept", "kept__errors"), left(ns, "kept"), "the skip is recorded");
    } else {
      assertEquals(List.of("kept"), left(ns, "kept"), "a query view has no work items to skip");
    }
    f.sql("DROP MATERIALIZED VIEW " + kept);
    assertEquals(List.of(), left(ns, "kept"), "DROP leaves nothing");
  }

  /** The directories of view {@code name} and of its errors table on the server's disk. */
  private static List<String> left(String ns, String name) {
    try (Stream<Path> files = Files.walk(f.root)) {
      // The directory server keeps table "ns.v" in "<hash>_ns$v".
      return files.map(p -> p.getFileName().toString())
          .filter(p -> p.endsWith(ns + "$" + name) || p.endsWith(ns + "$" + name + "__errors"))
          .map(p -> p.substring(p.indexOf('$') + 1)).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
