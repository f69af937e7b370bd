package io.lancerest.spark.mv.chunker;

import static io.lancerest.spark.mv.chunker.ChunkerFixture.content;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.definition;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.fromScratch;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.newView;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.Transaction;
import org.lance.operation.UpdateConfig;
import org.lance.operation.UpdateMap;

/**
 * Where a chunker view keeps its parent sets: inline in its config while they are small, in a
 * side file the config points to once they are not; what an engine that knows only the inline
 * keys leaves behind; and which state folders go. The large source has 2,000 parents spread
 * over 40,000 rows (every twentieth passes the filter), enough for the file.
 *
 * <p>An engine that knows only the inline keys is simulated by the config entries its commit
 * writes, upserted ({@link #upsertConfig}): it leaves every other entry as it was.
 */
class ChunkerParentStateTest {
  private static SparkSession spark;
  @TempDir Path dir;
  private String source;
  private final RefreshOptions defaults = RefreshOptions.DEFAULTS;
  private final ChunkerDefinition def = definition(TestChunkers.Words.class, "id % 20 = 0",
      null);

  @BeforeAll
  static void start() {
    spark = ChunkerFixture.spark();
  }

  /** The source of 2,000 parents over 40,000 rows, in fragments of 10,000. */
  private String scattered() {
    source = ChunkerFixture.docsSource(dir, 40_000, i -> "w" + i, 10_000);
    return source;
  }

  private ChunkerRefreshResult refresh(String view) {
    return ChunkerFixture.refresh(spark, source, view, def, defaults);
  }

  private static Map<String, String> config(String view) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      return ds.getConfig();
    }
  }

  /** The view's state as a refresh reads it. */
  private static ParentState state(String view) {
    long watermark;
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      watermark = Long.parseLong(ds.getSchema().findField(ChunkerLayout.SOURCE_ROW_ID)
          .getMetadata().get(ChunkerRefresh.WATERMARK_KEY));
    }
    return ParentState.read(config(view), watermark, LanceLocation.of(view, Map.of()), true);
  }

  /**
   * Commits {@code entries} to the view's config as an engine that writes only the keys it
   * knows does (an upsert: lance-core's {@code Dataset.updateConfig} replaces the whole config),
   * and checks that every other entry stayed.
   */
  private static void upsertConfig(String view, Map<String, String> entries) {
    Map<String, String> expected = new HashMap<>(config(view));
    expected.putAll(entries);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a);
        Transaction t = new Transaction.Builder().readVersion(ds.version())
            .operation(UpdateConfig.builder().configUpdates(UpdateMap.builder()
                .updates(entries).replace(false).build()).build()).build()) {
      new CommitBuilder(ds).execute(t).close();
    }
    assertEquals(expected, config(view), "only these entries changed");
  }

  private static ParentState.Pointer pointer(String view) {
    return ParentState.Pointer.parse(config(view).get(ParentState.POINTER_KEY));
  }

  private static Set<String> stateFolders(String view) throws IOException {
    Path dir = Path.of(view, ParentStateFile.DIR);
    if (!Files.isDirectory(dir)) {
      return Set.of();
    }
    try (var s = Files.list(dir)) {
      return s.map(p -> ParentStateFile.DIR + "/" + p.getFileName()).collect(
          java.util.stream.Collectors.toSet());
    }
  }

  private static String folderOf(String file) {
    return file.substring(0, file.lastIndexOf('/'));
  }

  @Test
  void largeSetsGoToAFileAndEachRefreshKeepsTheOneBefore() throws IOException {
    scattered();
    String view = newView(spark, dir, "v", source, def);
    assertEquals(2000, refresh(view).parentsExpanded());
    Map<String, String> config = config(view);
    ParentState.Pointer first = pointer(view);
    assertTrue(first.file() != null && first.previous() == null, String.valueOf(first));
    assertEquals(ParentState.IN_FILE, config.get(ChunkerRefresh.PROCESSED_KEY),
        "an engine that reads only the inline form refuses the view");
    assertEquals("0", config.get(ChunkerRefresh.UNPROCESSED_KEY));
    assertTrue(config.values().stream().mapToInt(String::length).sum() < 2048,
        "the config holds a pointer, not the sets: " + config);
    assertEquals(Set.of(folderOf(first.file())), stateFolders(view));

    SourceTables.append(source, SourceTables.docs(40_000, 40_100, i -> "w" + i), 10_000);
    assertEquals(5, refresh(view).parentsExpanded());
    ParentState.Pointer second = pointer(view);
    assertEquals(first.file(), second.previous());
    assertEquals(Set.of(folderOf(first.file()), folderOf(second.file())), stateFolders(view),
        "the file of the version before stays: restoring that version keeps its state");

    SourceTables.delete(source, "id % 400 = 0");
    assertEquals(101, refresh(view).parentsRemoved());
    ParentState.Pointer third = pointer(view);
    assertEquals(Set.of(folderOf(second.file()), folderOf(third.file())), stateFolders(view),
        "the file two refreshes back is released by the commit");
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  @Test
  void aViewWithTheInlineSetsIsRefreshedIncrementallyAndMovesThemToAFile() throws IOException {
    scattered();
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    Roaring64 processed = Roaring64.of(state(view).processed);
    // as an engine that kept every set inline left the view: no pointer, no skipped set
    upsertConfig(view, Map.of(ChunkerRefresh.PROCESSED_KEY, processed.base64(),
        ChunkerRefresh.TRUNCATED_KEY, "", ChunkerRefresh.UNPROCESSED_KEY, "0"));
    Map<String, String> before = config(view);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      ds.deleteConfigKeys(Set.of(ParentState.POINTER_KEY, ParentState.SKIPPED_KEY));
    }
    before.remove(ParentState.POINTER_KEY);
    before.remove(ParentState.SKIPPED_KEY);
    assertEquals(before, config(view), "only the two keys are gone");
    for (String f : stateFolders(view)) {
      deleteTree(Path.of(view, f));
    }
    SourceTables.append(source, SourceTables.docs(40_000, 40_100, i -> "w" + i), 10_000);
    int calls = TestChunkers.CALLS.get();
    ChunkerRefreshResult r = refresh(view);
    assertEquals(5, r.parentsExpanded(), "the inline processed set was read");
    assertEquals(calls + 5, TestChunkers.CALLS.get());
    ParentState.Pointer now = pointer(view);
    assertTrue(now.file() != null && now.previous() == null, String.valueOf(now));
    assertEquals(ParentState.IN_FILE, config(view).get(ChunkerRefresh.PROCESSED_KEY));
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  @Test
  void aStateFileThatIsGoneMakesTheNextRefreshARebuildThatEqualsTheSelect()
      throws IOException {
    scattered();
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    ParentState.Pointer p = pointer(view);
    deleteTree(Path.of(view, folderOf(p.file())));
    SourceTables.append(source, SourceTables.docs(40_000, 40_100, i -> "w" + i), 10_000);

    RefreshPlan plan = ChunkerRefresh.explain(spark, ChunkerFixture.tables(source, view), def,
        defaults);
    assertEquals(RefreshPlan.Mode.FULL, plan.mode());
    assertTrue(plan.reason().startsWith("the view's chunker state " + p.file()
        + " cannot be read ("), plan.reason());
    assertTrue(plan.reason().contains("so which parents were expanded cannot be told: every "
        + "parent is expanded again from source version "), plan.reason());
    ChunkerRefreshResult r = refresh(view);
    assertEquals(2005, r.parentsExpanded());
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
    assertFalse(stateFolders(view).contains(folderOf(p.file())));
  }

  @Test
  void aStateFileOtherThanTheOneCommittedIsNotUsed() {
    scattered();
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    ParentState.Pointer p = pointer(view);
    // the pointer of a file written at another watermark: not this version's state
    upsertConfig(view, Map.of(ParentState.POINTER_KEY,
        new ParentState.Pointer(p.file(), p.sha256(), p.watermark() - 1, null).json()));
    RefreshPlan plan = ChunkerRefresh.explain(spark, ChunkerFixture.tables(source, view), def,
        defaults);
    assertTrue(plan.reason().startsWith("the view's chunker state " + p.file() + " was written "
        + "at source version " + (p.watermark() - 1) + ", not at the view's watermark "
        + p.watermark() + ", so which parents were expanded cannot be told"), plan.reason());
    // the pointer of another file: its sets are not what this version committed
    upsertConfig(view, Map.of(ParentState.POINTER_KEY,
        new ParentState.Pointer(p.file(), "0".repeat(64), p.watermark(), null).json()));
    plan = ChunkerRefresh.explain(spark, ChunkerFixture.tables(source, view), def, defaults);
    assertTrue(plan.reason().startsWith("the view's chunker state " + p.file() + " does not "
        + "match the checksum its config records, so which parents were expanded cannot be "
        + "told: every parent is expanded again"), plan.reason());
    assertEquals(2000, refresh(view).parentsExpanded());
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  @Test
  void aDamagedPointerIsRefusedNamingTheConfigEntry() {
    scattered();
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    upsertConfig(view, Map.of(ParentState.POINTER_KEY,
        "{\"format\":1,\"file\":\"../../elsewhere/parents.lance\",\"sha256\":\"00\"}"));
    ChunkerRefreshException e = assertThrows(ChunkerRefreshException.class,
        () -> refresh(view));
    assertEquals("The view's config entry lancerest::view::chunker::parent_state cannot be "
        + "read ('{\"format\":1,\"file\":\"../../elsewhere/parents.lance\",\"sha256\":\"00\"}' "
        + "names no state file); the view table's config was altered. Run the refresh with "
        + "force = true: it rebuilds the view and writes its state anew", e.getMessage());
    // a rebuild needs none of it, and writes the state anew
    ChunkerRefreshResult rebuilt = ChunkerFixture.refresh(spark, source, view, def,
        RefreshOptions.builder().force(true).build());
    assertEquals(2000, rebuilt.parentsExpanded());
    assertTrue(pointer(view).file() != null);
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  @Test
  void smallSetsStayInline() {
    String small = dir.resolve("small").toString();
    source = ChunkerFixture.docsSource(Path.of(small), 100, i -> "w" + i, 10_000);
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    Map<String, String> config = config(view);
    assertEquals("", config.get(ParentState.POINTER_KEY));
    assertEquals(5, ParentIds.fromBase64(config.get(ChunkerRefresh.PROCESSED_KEY), "x")
        .getLongCardinality());
    assertTrue(config.get(ParentState.SKIPPED_KEY).startsWith(
        ChunkerFixture.version(source) + ":"), "stamped with the watermark: "
        + config.get(ParentState.SKIPPED_KEY));
    assertEquals(0, state(view).skipped.getLongCardinality());
    assertNull(Path.of(view, ParentStateFile.DIR).toFile().listFiles());
  }

  @Test
  void anOlderEnginesRebuildLeavesAPointerThatIsNotReadAgain() {
    String view = newView(spark, dir, "v", scattered(), def);
    refresh(view);
    String earlier = config(view).get(ParentState.POINTER_KEY);
    // 100 new rows (5 parents), then a rebuild by an engine that knows only the inline keys:
    // it writes the sets inline and leaves the pointer of the file before
    SourceTables.append(source, SourceTables.docs(40_000, 40_100, i -> "w" + i), 10_000);
    ChunkerFixture.refresh(spark, source, view, def,
        RefreshOptions.builder().force(true).build());
    upsertConfig(view, Map.of(ChunkerRefresh.PROCESSED_KEY,
        Roaring64.of(state(view).processed).base64(), ChunkerRefresh.TRUNCATED_KEY, "",
        ChunkerRefresh.UNPROCESSED_KEY, "0", ParentState.POINTER_KEY, earlier));
    assertEquals(2005, state(view).processed.getLongCardinality(), "the inline sets are read");

    SourceTables.delete(source, "id >= 40000");
    assertEquals(5, refresh(view).parentsRemoved(), "the new parents, which the file before "
        + "does not hold, are gone with their children");
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  @Test
  void aSkippedSetAnOlderEngineLeftBehindIsNotUsed() {
    source = ChunkerFixture.docsSource(dir, 6, i -> "w" + i + " x" + i, 3);
    SourceTables.append(source, List.of(new SourceTables.Doc(20, "FLAKY doc", "even")), 10);
    var flaky = definition(TestChunkers.Failing.class, null, new ErrorHandling(null,
        List.of(ErrorHandling.Rule.of(null, ErrorHandling.Action.SKIP)), null, null, null));
    String view = newView(spark, dir, "v", source, flaky);
    assertEquals(RefreshResult.JobStatus.PARTIAL,
        ChunkerFixture.refresh(spark, source, view, flaky, defaults).status());
    String skipped = config(view).get(ParentState.SKIPPED_KEY);
    assertEquals(1, state(view).skipped.getLongCardinality());
    // The flaky parent is processed now; an engine that does not know the skipped key leaves
    // it as it was when it commits that (simulated: its entries, then the key put back).
    assertEquals(RefreshResult.JobStatus.DONE,
        ChunkerFixture.refresh(spark, source, view, flaky, defaults).status());
    upsertConfig(view, Map.of(ParentState.SKIPPED_KEY, skipped));
    assertNull(state(view).skipped, "a skipped set written with another processed set");

    SourceTables.append(source, SourceTables.docs(30, 31, i -> "w" + i + " x" + i), 10);
    int calls = TestChunkers.CALLS.get();
    ChunkerRefreshResult r = ChunkerFixture.refresh(spark, source, view, flaky, defaults);
    assertEquals(1, r.parentsExpanded(), "only the new parent");
    assertEquals(calls + 1, TestChunkers.CALLS.get());
    assertEquals(fromScratch(spark, dir, source, flaky, defaults), content(spark, view));
  }

  @Test
  void aCommitThatDoesNotLandRemovesTheFolderItWrote() throws IOException {
    String view = newView(spark, dir, "v", scattered(), def);
    refresh(view);
    Set<String> before = stateFolders(view);
    long version = ChunkerFixture.version(view);
    SourceTables.append(source, SourceTables.docs(40_000, 40_100, i -> "w" + i), 10_000);
    RuntimeException e = assertThrows(RuntimeException.class, () -> ChunkerFixture.refresh(
        spark, source, view, def, defaults, new FailBeforeCommit()));
    assertEquals(FailBeforeCommit.MESSAGE, e.getMessage());
    assertEquals(version, ChunkerFixture.version(view), "nothing was committed");
    assertEquals(before, stateFolders(view), "the file written for the commit is gone");
    assertEquals(5, refresh(view).parentsExpanded());
  }

  /** Fails every refresh just before its commit, after the state file was written. */
  private static final class FailBeforeCommit implements RefreshListener {
    static final String MESSAGE = "injected: the driver stops before its commit";

    @Override
    public void beforeCommit() {
      throw new IllegalStateException(MESSAGE);
    }
  }

  @Test
  void maintenanceRemovesTheStateFoldersThatNoKeptVersionNames() throws IOException {
    String view = newView(spark, dir, "v", scattered(), def);
    refresh(view);
    SourceTables.append(source, SourceTables.docs(40_000, 40_100, i -> "w" + i), 10_000);
    refresh(view);
    long second = ChunkerFixture.version(view);
    String secondFile = pointer(view).file();
    SourceTables.append(source, SourceTables.docs(40_100, 40_200, i -> "w" + i), 10_000);
    refresh(view);
    String undone = folderOf(pointer(view).file());
    // the version of the second refresh restored: the third one's file is named by that
    // version only, which no later commit releases
    try (BufferAllocator a = new RootAllocator();
        Dataset at = Dataset.open(a, view, new ReadOptions.Builder().setVersion(second)
            .build())) {
      at.restore();
    }
    assertEquals(secondFile, pointer(view).file());
    assertEquals(5, refresh(view).parentsExpanded(), "incremental from the restored version");
    Set<String> named = Set.of(folderOf(pointer(view).file()), folderOf(secondFile));
    // what a crash between the write of a file and its commit leaves, two hours ago and now
    String crashed = ParentStateFile.DIR + "/crashed";
    String recent = ParentStateFile.DIR + "/recent";
    Files.createDirectories(Path.of(view, crashed));
    Files.writeString(Path.of(view, crashed, "parents.lance"), "never committed");
    Files.createDirectories(Path.of(view, recent));
    for (String f : List.of(crashed, undone)) {
      Files.setLastModifiedTime(Path.of(view, f), FileTime.fromMillis(
          System.currentTimeMillis() - 2 * 3600_000L));
    }
    Set<String> all = new java.util.HashSet<>(named);
    all.addAll(List.of(undone, crashed, recent));
    assertEquals(all, stateFolders(view));

    maintain(view, "1d");
    all.remove(crashed);
    assertEquals(all, stateFolders(view), "the undone file stays while its version is kept");
    maintain(view, "0s");
    assertEquals(Set.of(folderOf(pointer(view).file()), folderOf(pointer(view).previous()),
        recent), stateFolders(view), "only the latest version is kept, and a folder written "
        + "within the last hour may be a refresh's about to commit");
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  /** OPTIMIZE MATERIALIZED VIEW with {@code retention}. */
  private static void maintain(String view, String retention) {
    io.lancerest.spark.mv.maintenance.ViewMaintenance.run(LanceLocation.of(view, Map.of()),
        k -> "retention".equals(k) ? retention : null, Map.of(), true, null);
  }

  private static void deleteTree(Path p) throws IOException {
    try (var files = Files.walk(p)) {
      for (Path x : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(x);
      }
    }
  }

  /** A processed set as an older engine wrote it inline. */
  private record Roaring64(org.roaringbitmap.longlong.Roaring64NavigableMap set) {
    static Roaring64 of(org.roaringbitmap.longlong.Roaring64NavigableMap s) {
      return new Roaring64(s);
    }

    String base64() {
      return Base64.getEncoder().encodeToString(ParentIds.toBytes(set));
    }
  }
}
