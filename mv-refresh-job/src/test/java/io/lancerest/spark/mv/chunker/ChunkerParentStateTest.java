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

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.result.RefreshPlan;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;

/**
 * Where a chunker view keeps its parent sets: inline in its config while they are small, in a
 * side file the config points to once they are not. The source here has 2,000 parents spread
 * over 40,000 rows (every twentieth passes the filter), enough for the file.
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

  @BeforeEach
  void source() {
    source = ChunkerFixture.docsSource(dir, 40_000, i -> "w" + i, 10_000);
  }

  private ChunkerRefreshResult refresh(String view) {
    return ChunkerFixture.refresh(spark, source, view, def, defaults);
  }

  private static Map<String, String> config(String view) {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      return ds.getConfig();
    }
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
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    Roaring64 processed = Roaring64.of(ParentState.read(config(view),
        io.lancerest.spark.connector.LanceLocation.of(view, Map.of()), true).processed);
    // as an engine that kept every set inline left the view: no pointer, no skipped set
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      ds.updateConfig(Map.of(ChunkerRefresh.PROCESSED_KEY, processed.base64(),
          ChunkerRefresh.TRUNCATED_KEY, "", ChunkerRefresh.UNPROCESSED_KEY, "0"));
      ds.deleteConfigKeys(Set.of(ParentState.POINTER_KEY, ParentState.SKIPPED_KEY));
    }
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
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    ParentState.Pointer p = pointer(view);
    // the pointer of another file: its sets are not what this version committed
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      ds.updateConfig(Map.of(ParentState.POINTER_KEY,
          new ParentState.Pointer(p.file(), "0".repeat(64), null).json()));
    }
    RefreshPlan plan = ChunkerRefresh.explain(spark, ChunkerFixture.tables(source, view), def,
        defaults);
    assertTrue(plan.reason().startsWith("the view's chunker state " + p.file() + " does not "
        + "match the checksum its config records, so which parents were expanded cannot be "
        + "told: every parent is expanded again"), plan.reason());
    assertEquals(2000, refresh(view).parentsExpanded());
    assertEquals(fromScratch(spark, dir, source, def, defaults), content(spark, view));
  }

  @Test
  void aDamagedPointerIsRefusedNamingTheConfigEntry() {
    String view = newView(spark, dir, "v", source, def);
    refresh(view);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      ds.updateConfig(Map.of(ParentState.POINTER_KEY,
          "{\"format\":1,\"file\":\"../../elsewhere/parents.lance\",\"sha256\":\"00\"}"));
    }
    ChunkerRefreshException e = assertThrows(ChunkerRefreshException.class,
        () -> refresh(view));
    assertEquals("The view's config entry lancerest::view::chunker::parent_state cannot be "
        + "read ('{\"format\":1,\"file\":\"../../elsewhere/parents.lance\",\"sha256\":\"00\"}' "
        + "names no state file); the view table's config was altered. Re-create the view",
        e.getMessage());
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
    assertEquals(0, ParentIds.fromBase64(config.get(ParentState.SKIPPED_KEY), "x")
        .getLongCardinality());
    assertNull(Path.of(view, ParentStateFile.DIR).toFile().listFiles());
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
