package io.lancerest.spark.mv.chunker;

import static io.lancerest.spark.mv.chunker.ChunkerFixture.content;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.definition;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.fromScratch;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.newView;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.version;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshListener.Probe;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.RefreshCancelledException;
import io.lancerest.spark.mv.refresh.JobTracker;
import io.lancerest.spark.mv.refresh.RefreshCaches;
import io.lancerest.spark.mv.refresh.RefreshContext;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.lance.Dataset;
import org.lance.compaction.CompactionOptions;

/**
 * Small incremental chunker refreshes expand their parents on the driver ({@link
 * LocalExpansion}): the same view as the Spark path's, and the Spark path whenever the driver
 * declines.
 */
class ChunkerDriverExpansionTest {
  private static SparkSession spark;
  @TempDir Path dir;
  private String source;

  @BeforeAll
  static void start() {
    spark = ChunkerFixture.spark();
  }

  @BeforeEach
  void source() {
    source = ChunkerFixture.docsSource(dir, 40, ChunkerDriverExpansionTest::doc, 10);
  }

  @AfterEach
  void confs() {
    spark.conf().unset(LocalExpansion.MAX_PARENTS_CONF);
    spark.conf().unset(LocalExpansion.MAX_BYTES_CONF);
    spark.conf().unset(LocalExpansion.MAX_MILLIS_CONF);
  }

  private static String doc(long id) {
    return "w" + id + " x" + id + (id % 3 == 0 ? " y" + id : "");
  }

  /** Appends, updates in place, deletes and re-inserts rows spread over every fragment. */
  private void change() {
    SourceTables.append(source, SourceTables.docs(40, 46, ChunkerDriverExpansionTest::doc), 10);
    SourceTables.update(source, List.of(new SourceTables.Doc(3, "three words here", "odd"),
        new SourceTables.Doc(17, "seventeen", "odd"), new SourceTables.Doc(31, "", "odd")));
    SourceTables.delete(source, "id = 8 OR id = 25");
    SourceTables.append(source, List.of(new SourceTables.Doc(8, "eight again", "even")), 10);
  }

  private ChunkerRefreshResult refresh(String view, ChunkerDefinition def, Probes p,
      RefreshCaches caches) {
    return ChunkerRefresh.run(new RefreshContext(spark, view, null, p, caches),
        ChunkerFixture.tables(source, view), def, RefreshOptions.DEFAULTS);
  }

  /**
   * Both paths, on a source changed in place and on the same source compacted after the
   * change (the compaction moves processed parents of the changed fragments with new ones).
   */
  @ParameterizedTest
  @CsvSource({"true,false", "false,false", "true,true", "false,true"})
  void anIncrementalRefreshGivesTheSameViewOnTheDriverAsOnExecutors(boolean driver,
      boolean compacted) {
    if (!driver) {
      spark.conf().set(LocalExpansion.MAX_PARENTS_CONF, "0");
    }
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    change();
    if (compacted) {
      try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(source, a)) {
        ds.compact(CompactionOptions.builder().withMaterializeDeletions(true).build());
      }
    }
    int calls = TestChunkers.CALLS.get();

    Probes p = new Probes();
    ChunkerRefreshResult r = refresh(view, def, p, null);

    assertEquals(driver ? "driver" : "spark: " + LocalExpansion.MAX_PARENTS_CONF
        + " = 0 turns it off", p.get(Probe.WRITE_PATH));
    // 6 appended, 3 updated in place, 1 re-inserted under a new row id
    assertEquals(10, r.parentsExpanded());
    assertEquals(calls + 10, TestChunkers.CALLS.get(), "only the changed parents ran");
    List<String> content = content(spark, view);
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS), content);
    assertTrue(content.stream().anyMatch(s -> s.contains("|8|again|")), content::toString);
    assertTrue(content.stream().noneMatch(s -> s.contains("|25|")), content::toString);
  }

  /** A WHERE clause is the driver's filter too: parents that leave it lose their children. */
  @ParameterizedTest
  @ValueSource(strings = {"tag = 'even'", "length(doc) > 5 AND id % 3 <> 0"})
  void aFilteredDefinitionKeepsTheSameParentsOnTheDriver(String filter) {
    var def = definition(TestChunkers.Words.class, filter, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    change();

    Probes p = new Probes();
    refresh(view, def, p, null);

    assertEquals("driver", p.get(Probe.WRITE_PATH));
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
        content(spark, view));
  }

  @Test
  void moreParentsOrBytesThanTheCapsGoToExecutors() {
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);

    spark.conf().set(LocalExpansion.MAX_PARENTS_CONF, "5");
    change();
    Probes p = new Probes();
    refresh(view, def, p, null);
    assertEquals("spark: 10 parents to expand > " + LocalExpansion.MAX_PARENTS_CONF + " = 5",
        p.get(Probe.WRITE_PATH));
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
        content(spark, view));

    spark.conf().unset(LocalExpansion.MAX_PARENTS_CONF);
    spark.conf().set(LocalExpansion.MAX_BYTES_CONF, "100");
    SourceTables.append(source, SourceTables.docs(50, 60, ChunkerDriverExpansionTest::doc), 10);
    refresh(view, def, p.clear(), null);
    assertEquals("spark: the parents to expand exceed " + LocalExpansion.MAX_BYTES_CONF
        + " = 100 bytes", p.get(Probe.WRITE_PATH));
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
        content(spark, view));
  }

  /** 10 parents in one work item, 100 ms each: the driver's 300 ms run out mid-item. */
  @Test
  void aChunkerTooSlowForTheDriverIsExpandedByExecutorsFromThenOn() {
    var def = definition(TestChunkers.Hooked.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    RefreshCaches caches = new RefreshCaches();

    spark.conf().set(LocalExpansion.MAX_MILLIS_CONF, "300");
    change();
    long before = version(view);
    TestChunkers.reset();
    TestChunkers.onCall = n -> sleep(100);
    Probes p = new Probes();
    ChunkerRefreshResult r = refresh(view, def, p, caches);
    assertEquals("spark: the chunker took longer than " + LocalExpansion.MAX_MILLIS_CONF
        + " = 300 ms on the driver", p.get(Probe.WRITE_PATH));
    int driverCalls = TestChunkers.CALLS.get() - 10;
    assertTrue(driverCalls >= 1 && driverCalls < 10,
        "the driver stopped within the work item, after " + driverCalls + " of 10 calls");
    assertEquals(before + 1, r.viewVersion(), "one commit, of the executors' expansion");
    assertEquals(10, r.parentsExpanded());
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
        content(spark, view));

    // remembered by the catalog's caches, however fast the chunker is now
    TestChunkers.onCall = n -> { };
    spark.conf().unset(LocalExpansion.MAX_MILLIS_CONF);
    SourceTables.append(source, SourceTables.docs(50, 52, ChunkerDriverExpansionTest::doc), 10);
    refresh(view, def, p.clear(), caches);
    assertEquals("spark: the chunker took longer than " + LocalExpansion.MAX_MILLIS_CONF
        + " on the driver before", p.get(Probe.WRITE_PATH));
    // a refresh with caches of its own tries the driver again
    SourceTables.append(source, SourceTables.docs(52, 54, ChunkerDriverExpansionTest::doc), 10);
    refresh(view, def, p.clear(), null);
    assertEquals("driver", p.get(Probe.WRITE_PATH));
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
        content(spark, view));
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aChunkerFailingOnTheDriverFailsTheRefreshAsOnExecutors() {
    var def = definition(TestChunkers.Failing.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    SourceTables.append(source, List.of(new SourceTables.Doc(70, "BOOM now", "even")), 10);
    long sid = SourceTables.rowIds(source).get(70L);
    long before = version(view);

    Probes p = new Probes();
    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> refresh(view, def, p, null));
    assertTrue(e.getMessage().startsWith("Refresh of view "), e.getMessage());
    assertTrue(e.getMessage().endsWith(") failed: chunker 'Failing' (" + TestChunkers.Failing
        .class.getName() + ") failed on source row id " + sid + " after 1 attempt(s): "
        + "java.lang.IllegalStateException: cannot chunk BOOM now. Nothing was committed; the "
        + "view is unchanged"), e.getMessage());
    assertEquals(before, version(view));
  }

  /** One work item of 10 parents: the cancellation stops it after the call that asked. */
  @Test
  void aCancelledRefreshStopsTheDriverBetweenTwoChunkerCallsAndCommitsNothing() {
    var def = definition(TestChunkers.Hooked.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    List<String> before = content(spark, view);
    long version = version(view);
    change();
    TestChunkers.reset();
    JobTracker job = JobTracker.none("cancel-me");
    TestChunkers.onCall = n -> {
      if (n == 1) {
        job.requestCancel();
      }
    };

    Probes p = new Probes();
    RefreshCancelledException e = assertThrows(RefreshCancelledException.class,
        () -> ChunkerRefresh.run(new RefreshContext(spark, view, p, null, job),
            ChunkerFixture.tables(source, view), def, RefreshOptions.DEFAULTS));
    assertEquals("Refresh of view " + view + " (job cancel-me) was cancelled by CANCEL JOB; "
        + "nothing was committed, the view is as it was", e.getMessage());
    assertEquals(1, TestChunkers.CALLS.get(), "the call that cancelled ran, no other");
    assertEquals(version, version(view));
    assertEquals(before, content(spark, view));
  }

  @Test
  void aConfThatIsNotValidIsRefusedByNameWithWhatToSet() {
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    change();
    long v0 = version(view);
    spark.conf().set(LocalExpansion.MAX_PARENTS_CONF, "lots");
    InvalidOptionException e = assertThrows(InvalidOptionException.class,
        () -> refresh(view, def, null, null));
    assertEquals("Spark conf " + LocalExpansion.MAX_PARENTS_CONF + " = 'lots' is not valid: "
        + "set a whole number, 0 or more (0 turns the driver path off), or unset it for the "
        + "default 16384", e.getMessage());
    spark.conf().unset(LocalExpansion.MAX_PARENTS_CONF);
    spark.conf().set(LocalExpansion.MAX_BYTES_CONF, "much");
    e = assertThrows(InvalidOptionException.class, () -> refresh(view, def, null, null));
    assertEquals("Spark conf " + LocalExpansion.MAX_BYTES_CONF + " = 'much' is not valid: set "
        + "a size such as 67108864 or 64m, or unset it for the default 67108864", e.getMessage());
    spark.conf().unset(LocalExpansion.MAX_BYTES_CONF);
    spark.conf().set(LocalExpansion.MAX_MILLIS_CONF, "-5");
    e = assertThrows(InvalidOptionException.class, () -> refresh(view, def, null, null));
    assertEquals("Spark conf " + LocalExpansion.MAX_MILLIS_CONF + " = '-5' is not valid: set a "
        + "whole number of milliseconds from 0 to 86400000, or unset it for the default 2000",
        e.getMessage());
    assertEquals(v0, version(view), "nothing committed");
  }
}
