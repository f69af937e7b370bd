package io.lancerest.spark.mv.udtf;

import static io.lancerest.spark.mv.udtf.UdtfFixtures.COUNTS;
import static io.lancerest.spark.mv.udtf.UdtfFixtures.calls;
import static io.lancerest.spark.mv.udtf.UdtfFixtures.item;
import static io.lancerest.spark.mv.udtf.UdtfFixtures.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * UDTF refresh end to end on local Lance tables: source {@code items(category, name, price)}
 * with categories a (3 rows), b (2), c (2), d (1) and NULL (2), at version 1.
 */
class UdtfRefreshTest {
  private static SparkSession spark;
  @TempDir Path dir;
  private String source;
  private String viewUri;
  private ViewTables view;
  private String tag;

  @BeforeAll
  static void start() {
    spark = UdtfFixtures.spark();
  }


  @BeforeEach
  void tables(TestInfo info) {
    tag = info.getDisplayName();
    source = dir.resolve("items.lance").toString();
    viewUri = dir.resolve("v.lance").toString();
    view = new ViewTables("ns.v", viewUri, Map.of(), source, Map.of());
    UdtfFixtures.writeTenItems(spark, source);
    UdtfFixtures.createView(viewUri, COUNTS);
  }

  private UdtfDefinition counting(Map<String, String> extra) {
    Map<String, String> options = new java.util.HashMap<>(extra);
    options.put("tag", tag);
    return UdtfDefinition.of("counts", "1", UdtfFixtures.CountingUdtf.class,
            UdtfFixtures.arrow(COUNTS))
        .withPartitionBy("category").withOptions(options);
  }

  private static ErrorHandling handling(Long maxSkips, Double maxFraction,
      ErrorHandling.Rule... rules) {
    return new ErrorHandling(null, List.of(rules), maxSkips, maxFraction, null);
  }

  private UdtfRefreshResult refresh(UdtfDefinition def, RefreshOptions options) {
    UdtfSource src = UdtfFixtures.wholeTable(source, UdtfFixtures.latestVersion(source));
    return UdtfFixtures.refresh(spark, src, view, def, options);
  }

  private static final List<String> ALL_COUNTS = UdtfFixtures.ITEM_COUNTS;

  @Test
  void partitionByCallsOncePerDistinctValueWithNullAsItsOwnPartition() {
    UdtfRefreshResult r = refresh(counting(Map.of()), RefreshOptions.DEFAULTS);

    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(5, r.partitions());
    assertEquals(5, r.computed());
    assertEquals(5, r.udtfCalls());
    assertEquals(5, r.rowsInserted());
    assertEquals(ALL_COUNTS, rows(spark, viewUri, null));
    for (String k : List.of("a", "b", "c", "d", "null")) {
      assertEquals(1, calls(tag, k), k);
    }
  }

  @Test
  void sixteenEqualPartitionsOverSixteenTasksGetOneTaskEach() {
    String many = dir.resolve("many.lance").toString();
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 16 * 5; i++) {
      rows.add(item(String.format("k%02d", i % 16), "n" + i, i));
    }
    UdtfFixtures.writeItems(spark, many, rows, false);
    UdtfDefinition def = UdtfDefinition.of("tasks", "1", UdtfFixtures.TaskRecordingUdtf.class,
        UdtfFixtures.arrow(COUNTS)).withPartitionBy("category");

    UdtfFixtures.refresh(spark, UdtfFixtures.wholeTable(many, UdtfFixtures.latestVersion(many)), view,
        def, RefreshOptions.builder().concurrency(16).build());

    // Hash partitioning would put two or three keys in some tasks and none in others, and
    // the slot drawing the fullest task would finish last.
    List<Row> out = spark.read().format("lance").option("path", viewUri).load()
        .orderBy("category").collectAsList();
    assertEquals(16, out.size());
    assertEquals(16, out.stream().map(r -> r.getLong(2)).distinct().count(),
        "one task per partition: " + out);
    assertTrue(out.stream().allMatch(r -> r.getLong(1) == 5), out.toString());
  }

  @Test
  void withoutPartitionByTheWholeInputIsOneCall() {
    UdtfDefinition def = counting(Map.of()).withPartitionBy(null);
    UdtfRefreshResult r = refresh(def, RefreshOptions.DEFAULTS);

    assertEquals(1, r.partitions());
    assertEquals(1, r.udtfCalls());
    assertEquals(List.of("[null,10,1347]"), rows(spark, viewUri, null));
  }

  @Test
  void sameSourceVersionIsUpToDateUnlessForced() {
    UdtfRefreshResult first = refresh(counting(Map.of()), RefreshOptions.DEFAULTS);
    UdtfRefreshResult again = refresh(counting(Map.of()), RefreshOptions.DEFAULTS);

    assertEquals(RefreshResult.JobStatus.SKIPPED, again.status());
    assertEquals(first.viewVersion(), again.viewVersion());
    assertEquals(0, again.udtfCalls());
    assertEquals(1, calls(tag, "a"));
    assertEquals(first.viewVersion(), UdtfFixtures.latestVersion(viewUri));

    UdtfRefreshResult forced = refresh(counting(Map.of()),
        RefreshOptions.builder().force(true).build());
    assertEquals(RefreshResult.JobStatus.DONE, forced.status());
    assertEquals(first.viewVersion() + 1, forced.viewVersion());
    assertEquals(2, calls(tag, "a"));
    assertEquals(ALL_COUNTS, rows(spark, viewUri, null));
  }

  @Test
  void newSourceVersionRebuildsContentAndBaseVersionInOneOverwriteCommit() {
    UdtfRefreshResult first = refresh(counting(Map.of()), RefreshOptions.DEFAULTS);
    assertEquals("1", UdtfFixtures.schemaMetadata(viewUri).get(UdtfRefresh.BASE_VERSION_KEY));
    UdtfFixtures.writeItems(spark, source, List.of(item("a", "a4", 4), item("e", "e1", 7)),
        true);

    UdtfRefreshResult second = refresh(counting(Map.of()), RefreshOptions.DEFAULTS);

    assertEquals(2, second.sourceVersion());
    // One commit: exactly one new view version, carrying both the rows and the base version.
    assertEquals(first.viewVersion() + 1, second.viewVersion());
    assertEquals(5, second.rowsDeleted());
    assertEquals(List.of("[a,4,10]", "[b,2,30]", "[c,2,300]", "[d,1,1000]", "[e,1,7]",
        "[null,2,11]"), rows(spark, viewUri, null));
    Map<String, String> meta = UdtfFixtures.schemaMetadata(viewUri);
    assertEquals("2", meta.get(UdtfRefresh.BASE_VERSION_KEY));
    assertEquals("DONE", meta.get(UdtfRefresh.LAST_STATUS_KEY));
    assertEquals(second.jobId(), meta.get(UdtfRefresh.LAST_JOB_KEY));
    // A reader at the previous version still sees the old view, whole.
    assertEquals(ALL_COUNTS, rows(spark, viewUri, first.viewVersion()));
  }

  @Test
  void failedRunCommitsNothingAndTheNextRunReusesItsFinishedPartitions() {
    UdtfDefinition def = counting(Map.of("fail_key", "c", "fail_times", "1"));
    long before = UdtfFixtures.latestVersion(viewUri);
    // One task: partitions run in key order NULL, a, b, c, d; c fails the first time.
    RefreshOptions oneTask = RefreshOptions.builder().concurrency(1).build();

    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> refresh(def, oneTask));
    assertTrue(e.getMessage().endsWith(" failed on partition c after 1 attempt(s): "
        + "java.lang.IllegalStateException: boom on c (call 1). Nothing was committed; the "
        + "view is unchanged"), e.getMessage());
    assertEquals(before, UdtfFixtures.latestVersion(viewUri));
    assertEquals(before, UdtfFixtures.latestVersion(viewUri));
    assertEquals(List.of(), rows(spark, viewUri, null));
    Path checkpoints = dir.resolve("v.lance").resolve(PartitionCheckpoints.DIR);
    assertTrue(java.nio.file.Files.isDirectory(checkpoints.resolve("_versions")),
        "finished partitions are a Lance table inside the view");

    UdtfRefreshResult r = refresh(def, oneTask);
    assertFalse(java.nio.file.Files.exists(checkpoints), "the commit dropped the checkpoints");

    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(3, r.reused());
    assertEquals(2, r.computed());
    assertEquals(ALL_COUNTS, rows(spark, viewUri, null));
    // NULL, a and b were computed once, by the failed run; c twice; d once (second run).
    assertEquals(List.of(1, 1, 1, 2, 1), List.of(calls(tag, "null"), calls(tag, "a"),
        calls(tag, "b"), calls(tag, "c"), calls(tag, "d")));
  }

  @Test
  void retryReplaysTheWholePartitionWithBackoff() {
    UdtfDefinition def = counting(Map.of("fail_key", "a", "fail_times", "2"))
        .withErrorHandling(handling(null, null,
            ErrorHandling.Rule.retry("boom", 3, ErrorHandling.Backoff.EXPONENTIAL, 10, 100)));

    UdtfRefreshResult r = refresh(def, RefreshOptions.DEFAULTS);

    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(3, calls(tag, "a"));
    assertEquals(7, r.udtfCalls());
    // The third attempt saw all 3 rows of a, although the failed ones stopped after 2.
    assertEquals(ALL_COUNTS, rows(spark, viewUri, null));
  }

  @Test
  void retryStopsWhenTheErrorDoesNotMatch() {
    UdtfDefinition def = counting(Map.of("fail_key", "a", "fail_times", "2"))
        .withErrorHandling(handling(null, null, ErrorHandling.Rule.retry(
            "TimeoutException", 3, ErrorHandling.Backoff.FIXED, 1, 1)));

    assertThrows(FunctionFailedException.class, () -> refresh(def, RefreshOptions.DEFAULTS));
    assertEquals(1, calls(tag, "a"));
  }

  @Test
  void skippedPartitionsAreRecordedAndTheResultIsPartial() {
    UdtfDefinition def = counting(Map.of("fail_key", "b", "fail_times", "99"))
        .withErrorHandling(handling(1L, 0.5,
            ErrorHandling.Rule.retry(null, 2, ErrorHandling.Backoff.FIXED, 1, 1),
            ErrorHandling.Rule.of(null, ErrorHandling.Action.SKIP)));

    UdtfRefreshResult r = refresh(def, RefreshOptions.builder().jobId("job-7").build());

    assertEquals(RefreshResult.JobStatus.PARTIAL, r.status());
    assertEquals(List.of(new UdtfRefreshResult.SkippedPartition("b", 2,
        "java.lang.IllegalStateException", "boom on b (call 2)")), r.skipped());
    assertEquals(List.of("[a,3,6]", "[c,2,300]", "[d,1,1000]", "[null,2,11]"),
        rows(spark, viewUri, null));
    Map<String, String> meta = UdtfFixtures.schemaMetadata(viewUri);
    assertEquals("PARTIAL", meta.get(UdtfRefresh.LAST_STATUS_KEY));
    assertEquals("1", meta.get(UdtfRefresh.SKIPPED_KEY));
    String errors = dir.resolve("v__errors.lance").toString();
    assertEquals(errors, r.errorsTable());
    Row e = spark.read().format("lance").option("path", errors).load()
        .select("job_id", "view", "kind", "function_name", "function_version",
            "source_version", "__source_row_id", "partition_column", "partition_key",
            "attempts", "error_class", "error_message")
        .collectAsList().get(0);
    assertEquals("[job-7,ns.v,udtf,counts,1,1,null,category,b,2,"
        + "java.lang.IllegalStateException,boom on b (call 2)]", e.toString());
  }

  @Test
  void aSkippedNullPartitionIsRecordedWithANullKey() {
    UdtfDefinition def = counting(Map.of("fail_key", "null", "fail_times", "99"))
        .withErrorHandling(handling(null, null,
            ErrorHandling.Rule.of(null, ErrorHandling.Action.SKIP)));

    UdtfRefreshResult r = refresh(def, RefreshOptions.builder().jobId("job-null").build());

    assertEquals(RefreshResult.JobStatus.PARTIAL, r.status());
    assertEquals(List.of(new UdtfRefreshResult.SkippedPartition(null, 1,
        "java.lang.IllegalStateException", "boom on null (call 1)")), r.skipped());
    List<Row> recorded = spark.read().format("lance").option("path", r.errorsTable()).load()
        .where("job_id = 'job-null'").select("partition_column", "partition_key")
        .collectAsList();
    assertEquals("[[category,null]]", recorded.toString());
    assertTrue(recorded.get(0).isNullAt(1), "the NULL partition's key is SQL NULL, not text");
  }

  @Test
  void aConflictingCommitIsComputedAgainAndOnlyTheCommittedAttemptRecordsItsSkips() {
    ErrorHandling skip = handling(null, null,
        ErrorHandling.Rule.of(null, ErrorHandling.Action.SKIP));
    // Partition a commits to the view table while it runs, so the first attempt's view commit
    // conflicts after the skipped partition b was staged in the errors table. The refresh
    // driver computes the refresh again: partition a comes from its checkpoint (no second
    // touch of the view), and that attempt commits.
    UdtfDefinition racing = counting(Map.of("fail_key", "b", "fail_times", "99",
        "touch_view", viewUri)).withErrorHandling(skip);

    UdtfRefreshResult r = refresh(racing, RefreshOptions.builder().jobId("job-lost").build());

    assertEquals(RefreshResult.JobStatus.PARTIAL, r.status());
    assertEquals(r.partitions() - 1, r.reused(), "every partition but the skipped b came from "
        + "the first attempt's checkpoints");
    String errors = dir.resolve("v__errors.lance").toString();
    assertEquals(List.of("job-lost|b"), spark.read().format("lance").option("path", errors)
        .load().collectAsList().stream()
        .map(e -> e.getAs("job_id") + "|" + e.getAs("partition_key")).toList(),
        "the abandoned attempt recorded nothing; the committed one recorded b once");
  }

  @Test
  void aPartitionFailureWhileAnotherWriterCommittedIsReportedAsAConflict() {
    // Partition a commits to the view meanwhile (as a concurrent refresh would, clearing the
    // checkpoints this run writes into); partition b then fails.
    UdtfDefinition racing = counting(Map.of("fail_key", "b", "fail_times", "99",
        "touch_view", viewUri));

    io.lancerest.spark.mv.commit.ViewCommitConflictException e = assertThrows(
        io.lancerest.spark.mv.commit.ViewCommitConflictException.class,
        () -> refresh(racing, RefreshOptions.builder().jobId("job-race").build()));

    assertTrue(e.getMessage().contains("was modified by another commit after version "),
        e.getMessage());
    assertTrue(e.getMessage().contains("while job job-race ran; partition b then failed: "
        + "java.lang.IllegalStateException: boom on b"), e.getMessage());
  }

  @Test
  void moreSkipsThanAllowedFailAndCommitNothing() {
    UdtfDefinition def = counting(Map.of("fail_key", "b", "fail_times", "99"))
        .withErrorHandling(handling(0L, null,
            ErrorHandling.Rule.of(null, ErrorHandling.Action.SKIP)));
    long before = UdtfFixtures.latestVersion(viewUri);

    MaterializedViewException e = assertThrows(MaterializedViewException.class,
        () -> refresh(def, RefreshOptions.DEFAULTS));

    assertTrue(e.getMessage().contains(") failed: 1 partitions were skipped, more than "
        + "error_handling.max_skip_count = 0; the refresh committed nothing. First skipped: "
        + "partition b: java.lang.IllegalStateException: boom on b"), e.getMessage());
    assertEquals(before, UdtfFixtures.latestVersion(viewUri));
  }

  @Test
  void outputThatDoesNotMatchTheSchemaNamesTheColumnAndIsNotRetried() {
    UdtfDefinition def = counting(Map.of("bad_output", "true"))
        .withErrorHandling(handling(null, null,
            ErrorHandling.Rule.retry(null, 3, ErrorHandling.Backoff.FIXED, 1, 1),
            ErrorHandling.Rule.of(null, ErrorHandling.Action.SKIP)));

    FunctionFailedException e = assertThrows(FunctionFailedException.class,
        () -> refresh(def, RefreshOptions.builder().concurrency(1).build()));

    assertTrue(e.getMessage().contains("returned java.lang.String for column 'total'; the "
        + "declared output schema says bigint, which needs java.lang.Long"), e.getMessage());
    assertTrue(e.getMessage().contains(" after 1 attempt(s): "), "not retried: "
        + e.getMessage());
  }

  @Test
  void unknownInputColumnIsAClearError() {
    UdtfDefinition def = counting(Map.of()).withInputColumns(List.of("price", "colour"));
    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> refresh(def, RefreshOptions.DEFAULTS));
    assertEquals("View 'ns.v': input column 'colour' is not produced by the source query "
        + "(its columns are [category, name, price])", e.getMessage());
  }

  @Test
  void classThatIsNotABatchUdtfIsAClearError() {
    UdtfDefinition def = new UdtfDefinition(FunctionEnvelope.java(String.class.getName(), "x",
        "1", UdtfFixtures.arrow(COUNTS), null, false, Map.of()), null, null, null, null);
    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> refresh(def, RefreshOptions.DEFAULTS));
    assertEquals("UDTF 'x': class java.lang.String does not implement "
        + BatchUdtf.class.getName(), e.getMessage());
  }

  @Test
  void inputColumnsLimitWhatTheFunctionSeesAndTheKeyStillGroups() {
    StructType out = new StructType().add("columns", DataTypes.StringType, false);
    UdtfFixtures.createView(dir.resolve("cols.lance").toString(), out);
    ViewTables colsView = new ViewTables("ns.cols", dir.resolve("cols.lance").toString(),
        Map.of(), source, Map.of());
    UdtfDefinition def = new UdtfDefinition(FunctionEnvelope.java(ColumnsUdtf.class.getName(),
        "cols", "1", UdtfFixtures.arrow(out), List.of("price"), false, Map.of()), "category",
        null, null, null);

    UdtfFixtures.refresh(spark, UdtfFixtures.wholeTable(source, 1), colsView, def,
        RefreshOptions.DEFAULTS);

    List<String> seen = rows(spark, colsView.viewUri(), null);
    assertEquals(List.of("[a:[price]]", "[b:[price]]", "[c:[price]]", "[d:[price]]",
        "[null:[price]]"), seen);
  }

  /** Emits "key:[input field names]". */
  public static final class ColumnsUdtf implements BatchUdtf {
    @Override
    public java.util.Iterator<Row> process(UdtfContext ctx, java.util.Iterator<Row> rows) {
      List<String> names = new ArrayList<>();
      while (rows.hasNext()) {
        names = List.of(rows.next().schema().fieldNames());
      }
      return List.of(RowFactory.create(ctx.partitionKey() + ":" + names)).iterator();
    }
  }

  @Test
  void shippedTopKRanksTheBestRowsOfEachPartition() {
    StructType out = new StructType()
        .add("category", DataTypes.StringType, true)
        .add("name", DataTypes.StringType, false)
        .add("rank", DataTypes.IntegerType, false);
    String uri = dir.resolve("top.lance").toString();
    UdtfFixtures.createView(uri, out);
    UdtfDefinition def = new UdtfDefinition(FunctionEnvelope.java(TopKUdtf.class.getName(),
        "topk", "1", UdtfFixtures.arrow(out), null, false,
        Map.of("k", "2", "order_by", "price")), "category", null, null, null);

    UdtfFixtures.refresh(spark, UdtfFixtures.wholeTable(source, 1),
        new ViewTables("ns.top", uri, Map.of(), source, Map.of()), def, RefreshOptions.DEFAULTS);

    assertEquals(List.of("[a,a2,2]", "[a,a3,1]", "[b,b1,2]", "[b,b2,1]", "[c,c1,2]",
        "[c,c2,1]", "[d,d1,1]", "[null,n1,2]", "[null,n2,1]"), rows(spark, uri, null));
  }

  @Test
  void resourceRequestsAreAdvisoryInLocalModeAndTheRefreshRuns() {
    UdtfDefinition def = counting(Map.of())
        .withResources(UdtfResources.of("2", "0", "3GiB"));
    UdtfRefreshResult r = refresh(def, RefreshOptions.DEFAULTS);
    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(ALL_COUNTS, rows(spark, viewUri, null));
  }

  @Test
  void aStoredFrameworkDefinitionRunsWithTheOutputSchemaTheClassReports() {
    SourceQuery query = SourceQuery.of(List.of("ns", "items"), null, List.of(), null, null);
    StructType out = new StructType()
        .add("category", DataTypes.StringType, true)
        .add("name", DataTypes.StringType, false)
        .add("price", DataTypes.LongType, false)
        .add("rank", DataTypes.IntegerType, false);
    Map<String, String> options = Map.of("k", "1", "order_by", "price");
    // The output schema a SQL CREATE gets from the class itself.
    Schema derived = UdtfFixtures.arrow(new TopKUdtf().outputSchema(UdtfFixtures.ITEMS,
        options));
    assertEquals(UdtfFixtures.arrow(out), derived);
    FunctionSpec spec = new FunctionSpec(MaterializedViewKind.UDTF,
        FunctionEnvelope.java(TopKUdtf.class.getName(), "topk", "1", derived, null, false,
            options),
        "category", null, null, null, null, null, null, null);
    ViewDefinition def = new ViewDefinition(List.of("ns", "top1"), MaterializedViewKind.UDTF,
        query, spec, false);
    String uri = dir.resolve("top1.lance").toString();
    UdtfFixtures.createView(uri, out);
    UdtfViews.validateCreate(def, LanceLocation.of(source, Map.of()));

    UdtfRefreshResult r = UdtfFixtures.refresh(spark, UdtfFixtures.wholeTable(source, 1),
        new ViewTables("ns.top1", uri, Map.of(), source, Map.of()), UdtfViews.definition(def),
        RefreshOptions.DEFAULTS);

    assertEquals(5, r.rowsInserted());
    assertEquals(List.of("[a,a3,3,1]", "[b,b2,20,1]", "[c,c2,200,1]", "[d,d1,1000,1]",
        "[null,n2,6,1]"), rows(spark, uri, null));
  }

  @Test
  void indexedPartitioningOfAColumnWithoutAVectorIndexIsRefusedAtCreate() {
    FunctionSpec spec = new FunctionSpec(MaterializedViewKind.UDTF,
        FunctionEnvelope.java(TopKUdtf.class.getName(), "topk", "1", UdtfFixtures.arrow(COUNTS),
            null, false, Map.of()), null, "price", null, null, null, null, null, null);
    ViewDefinition def = new ViewDefinition(List.of("ns", "v"), MaterializedViewKind.UDTF,
        SourceQuery.of(List.of("ns", "items"), null, List.of(), null, null), spec, false);
    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> UdtfViews.validateCreate(def, LanceLocation.of(source, Map.of())));
    assertTrue(e.getMessage().startsWith("PARTITION BY INDEXED price: source table '" + source
        + "' has no vector index on column 'price'"), e.getMessage());
  }
}
