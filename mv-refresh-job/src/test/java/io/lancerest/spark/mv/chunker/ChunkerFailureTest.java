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
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ErrorHandling.Action;
import io.lancerest.spark.mv.definition.ErrorHandling.Backoff;
import io.lancerest.spark.mv.definition.ErrorHandling.Rule;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.result.RefreshResult;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Error handling, output validation and crash injection: a failed refresh changes nothing. */
class ChunkerFailureTest {
  private static SparkSession spark;
  @TempDir Path dir;
  private String source;
  private final RefreshOptions defaults = RefreshOptions.DEFAULTS;

  @BeforeAll
  static void start() {
    spark = ChunkerFixture.spark();
  }

  @BeforeEach
  void source() {
    source = ChunkerFixture.docsSource(dir, 40, i -> "a" + i + " b" + i + " c" + i, 10);
  }

  private static ErrorHandling retryThenSkip(Long maxCount, Double maxFraction) {
    return new ErrorHandling(null, List.of(Rule.retry("IOException", 3, Backoff.FIXED, 1, 1),
        Rule.of(null, Action.SKIP)), maxCount, maxFraction, null);
  }

  @Test
  void aFailingParentIsRetriedAndThenSucceeds() {
    SourceTables.append(source, List.of(new SourceTables.Doc(50, "FLAKY doc", "even")), 10);
    var def = definition(TestChunkers.Failing.class, null, retryThenSkip(null, null));
    String view = newView(spark, dir, "v", source, def);

    ChunkerRefreshResult r = ChunkerFixture.refresh(spark, source, view, def, defaults);

    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(41, r.parentsExpanded());
    assertEquals(42, TestChunkers.CALLS.get(), "41 parents, one of them called twice");
    assertTrue(content(spark, view).stream().anyMatch(s -> s.contains("|FLAKY|")));
  }

  @Test
  void skippedParentsAreRecordedInTheErrorsTableAndTheResultIsPartial() {
    SourceTables.append(source, List.of(new SourceTables.Doc(50, "BOOM one", "even"),
        new SourceTables.Doc(51, "LATE two words", "odd")), 10);
    var def = definition(TestChunkers.Failing.class, null, retryThenSkip(null, null));
    String view = newView(spark, dir, "v", source, def);

    ChunkerRefreshResult r = ChunkerFixture.refresh(spark, source, view, def, defaults);

    assertEquals(RefreshResult.JobStatus.PARTIAL, r.status());
    assertEquals(2, r.skipped().size());
    assertEquals(120, r.rowsInserted(), "no row of a skipped parent, not even LATE's first");
    Map<Long, Long> ids = SourceTables.rowIds(source);
    List<Row> errors = spark.read().format("lance")
        .load(io.lancerest.spark.mv.layout.ErrorsTable.nextTo(view))
        .orderBy("__source_row_id").collectAsList();
    assertEquals(2, errors.size());
    assertEquals(ids.get(50L), errors.get(0).getAs("__source_row_id"));
    assertEquals("java.lang.IllegalStateException", errors.get(0).getAs("error_class"));
    assertEquals("cannot chunk BOOM one", errors.get(0).getAs("error_message"));
    assertEquals(1, (int) errors.get(0).getAs("attempts"), "not retried: not an IOException");
    assertEquals("late failure on LATE two words", errors.get(1).getAs("error_message"));

    // Skipped parents are not processed: the next refresh tries them again.
    int calls = TestChunkers.CALLS.get();
    ChunkerRefreshResult again = ChunkerFixture.refresh(spark, source, view, def, defaults);
    assertEquals(2, again.parentsExpanded());
    assertEquals(calls + 2, TestChunkers.CALLS.get());
    assertEquals(RefreshResult.JobStatus.PARTIAL, again.status());
  }

  @Test
  void exceedingTheSkipThresholdFailsAndCommitsNothing() {
    SourceTables.append(source, List.of(new SourceTables.Doc(50, "BOOM one", "even"),
        new SourceTables.Doc(51, "BOOM two", "odd")), 10);
    var def = definition(TestChunkers.Failing.class, null, retryThenSkip(1L, null));
    String view = newView(spark, dir, "v", source, def);
    long before = version(view);

    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> ChunkerFixture.refresh(spark, source, view, def, defaults));
    assertTrue(e.getMessage().matches("Refresh of view .+ \\(job .+\\) failed: "
        + java.util.regex.Pattern.quote("2 parents were skipped, more than "
        + "error_handling.max_skip_count = 1; the refresh committed nothing. First skipped: "
        + "source row id ") + "\\d+: java\\.lang\\.IllegalStateException: cannot chunk BOOM "
        + "(one|two)"), e.getMessage());
    assertEquals(before, version(view));

    var byFraction = definition(TestChunkers.Failing.class, null, retryThenSkip(null, 0.01));
    MaterializedViewException f = assertThrows(MaterializedViewException.class,
        () -> ChunkerFixture.refresh(spark, source, view, byFraction, defaults));
    assertTrue(f.getMessage().contains(") failed: 2 of 42 parents were skipped (0.0476)"),
        f.getMessage());
    assertEquals(before, version(view));
  }

  @Test
  void batchFailuresAreIsolatedToTheFailingParent() {
    SourceTables.append(source, List.of(new SourceTables.Doc(50, "BOOM one", "even")), 10);
    var def = definition(TestChunkers.BatchWords.class, null, retryThenSkip(null, null));
    String view = newView(spark, dir, "v", source, def);

    ChunkerRefreshResult r = ChunkerFixture.refresh(spark, source, view, def,
        RefreshOptions.builder().sourceTaskSize(8).concurrency(1).build());

    assertEquals(RefreshResult.JobStatus.PARTIAL, r.status());
    assertEquals(List.of(SourceTables.rowIds(source).get(50L)),
        r.skipped().stream().map(ChunkerRefreshResult.SkippedParent::sourceRowId).toList());
    assertEquals(120, r.rowsInserted());
  }

  @Test
  void outputOfTheWrongTypeFailsNamingTheColumn() {
    SourceTables.append(source, List.of(new SourceTables.Doc(50, "INT", "even")), 10);
    var def = definition(TestChunkers.BadOutput.class, null, retryThenSkip(null, null));
    String view = newView(spark, dir, "v", source, def);
    long before = version(view);

    ChunkerOutputException e = assertThrows(ChunkerOutputException.class,
        () -> ChunkerFixture.refresh(spark, source, view, def, defaults));
    assertEquals("chunk", e.column());
    long sid = SourceTables.rowIds(source).get(50L);
    assertEquals("Chunker 'BadOutput' emitted a java.lang.Integer for column 'chunk' declared "
        + "Utf8 (source row id " + sid + ", child 0). Fix the chunker or its declared output "
        + "schema", e.getMessage());
    assertEquals(before, version(view));
  }

  @Test
  void nullInANonNullableOutputFailsNamingTheColumn() {
    SourceTables.append(source, List.of(new SourceTables.Doc(50, "NULL", "even")), 10);
    var def = definition(TestChunkers.BadOutput.class, null, null);
    String view = newView(spark, dir, "v", source, def);

    ChunkerOutputException e = assertThrows(ChunkerOutputException.class,
        () -> ChunkerFixture.refresh(spark, source, view, def, defaults));
    assertEquals("char_offset", e.column());
    assertTrue(e.getMessage().startsWith("Chunker 'BadOutput' emitted null in non-nullable "
        + "column 'char_offset'"), e.getMessage());
  }

  @Test
  void aChunkerThrowingAfterSomeRowsLeavesTheViewAsItWasAndARerunIsExact() {
    var def = definition(TestChunkers.ThrowAfterN.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, defaults);
    List<String> before = content(spark, view);
    long version = version(view);

    SourceTables.delete(source, "id < 5");
    SourceTables.update(source, List.of(new SourceTables.Doc(7, "x y z w", "odd")));
    SourceTables.append(source, SourceTables.docs(100, 140, i -> "n" + i + " m" + i), 10);
    // Fail after 50 of the ~84 new rows: fragments were written, nothing committed.
    TestChunkers.ROWS.set(0);
    TestChunkers.throwAfterRows = 50;
    RefreshOptions small = RefreshOptions.builder().sourceTaskSize(5)
        .maxRowsPerFragment(8).build();
    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> ChunkerFixture.refresh(spark, source, view, def, small));
    assertTrue(e.getMessage().contains("injected crash after 50 rows"), e.getMessage());
    assertEquals(version, version(view));
    assertEquals(before, content(spark, view));

    TestChunkers.throwAfterRows = Integer.MAX_VALUE;
    ChunkerFixture.refresh(spark, source, view, def, small);
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  @Test
  void aDriverFailingJustBeforeTheCommitLeavesTheViewAsItWas() {
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, defaults);
    long version = version(view);
    List<String> before = content(spark, view);
    SourceTables.delete(source, "id = 3");
    SourceTables.append(source, SourceTables.docs(200, 210, i -> "p" + i), 10);

    Probes lost = new Probes().beforeCommit(() -> {
      throw new IllegalStateException("driver lost");
    });
    assertThrows(IllegalStateException.class, () -> ChunkerFixture.refresh(spark, source, view, def, defaults, lost));
    assertEquals(version, version(view));
    assertEquals(before, content(spark, view));

    ChunkerRefreshResult r = ChunkerFixture.refresh(spark, source, view, def, defaults);
    assertEquals(10, r.parentsExpanded());
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }
}
