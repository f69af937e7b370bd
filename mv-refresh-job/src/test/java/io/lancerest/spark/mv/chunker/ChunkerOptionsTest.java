package io.lancerest.spark.mv.chunker;

import static io.lancerest.spark.mv.chunker.ChunkerFixture.content;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.definition;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.fromScratch;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.newView;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidOptionException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.Fragment;

/** Refresh options, the batch form, and the shipped chunkers used through a definition. */
class ChunkerOptionsTest {
  private static SparkSession spark;
  @TempDir Path dir;
  private String source;

  @BeforeAll
  static void start() {
    spark = ChunkerFixture.spark();
  }

  @BeforeEach
  void source() {
    source = ChunkerFixture.docsSource(dir, 40, i -> "a" + i + " b" + i + " c" + i, 10);
  }

  private static RefreshOptions.Builder opts() {
    return RefreshOptions.builder();
  }

  @Test
  void batchChunkerGetsWorkItemsOfSourceTaskSizeAndMatchesTheRowForm() {
    var batch = definition(TestChunkers.BatchWords.class, null, null);
    String view = newView(spark, dir, "v", source, batch);

    ChunkerFixture.refresh(spark, source, view, batch, opts().sourceTaskSize(8).concurrency(1)
        .build());

    assertEquals(List.of(8, 8, 8, 8, 8), TestChunkers.BATCH_SIZES);
    var rows = definition(TestChunkers.Words.class, null, null);
    assertEquals(fromScratch(spark, dir, source, rows, RefreshOptions.DEFAULTS),
        content(spark, view));
  }

  @Test
  void concurrencyBoundsTheTasksRunningAtOnce() {
    var def = definition(TestChunkers.Slow.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, opts().sourceTaskSize(10).concurrency(1)
        .build());
    assertEquals(1, TestChunkers.MAX_ACTIVE.get());

    TestChunkers.reset();
    String other = newView(spark, dir, "w", source, def);
    ChunkerFixture.refresh(spark, source, other, def, opts().sourceTaskSize(10).concurrency(2)
        .build());
    assertEquals(2, TestChunkers.MAX_ACTIVE.get(), "local[2] runs both tasks at once");
  }

  @Test
  void intraApplierConcurrencyCallsInParallelAndKeepsTheOrder() {
    var def = definition(TestChunkers.Slow.class, null, null);
    String view = newView(spark, dir, "v", source, def);

    ChunkerFixture.refresh(spark, source, view, def, opts().concurrency(1)
        .intraApplierConcurrency(4).build());

    assertTrue(TestChunkers.MAX_ACTIVE.get() > 1, "calls overlapped inside one task");
    assertTrue(TestChunkers.THREADS.stream().allMatch(t -> t.startsWith("chunker-Slow-")),
        TestChunkers.THREADS.toString());
    var words = definition(TestChunkers.Words.class, null, null);
    assertEquals(fromScratch(spark, dir, source, words, RefreshOptions.DEFAULTS),
        content(spark, view));
  }

  @Test
  void aTaskArrowMemoryCapIsASparkConfAndABadOneIsRefusedBeforeAnythingRuns() {
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    long before = ChunkerFixture.version(view);
    spark.conf().set(ChunkerTask.TASK_ARROW_MEMORY_CONF, "lots");
    try {
      InvalidOptionException e = assertThrows(InvalidOptionException.class,
          () -> ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS));
      assertEquals(ChunkerTask.TASK_ARROW_MEMORY_CONF + " must be a positive size in bytes "
          + "(e.g. 268435456 or 256m), got 'lots'", e.getMessage());
      assertEquals(before, ChunkerFixture.version(view));

      // 64 MiB is plenty for these documents: the refresh runs under the cap
      spark.conf().set(ChunkerTask.TASK_ARROW_MEMORY_CONF, "64m");
      ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
      assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
          content(spark, view));
    } finally {
      spark.conf().unset(ChunkerTask.TASK_ARROW_MEMORY_CONF);
    }
  }

  @Test
  void maxRowsPerFragmentBoundsEveryNewFragment() {
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);

    ChunkerFixture.refresh(spark, source, view, def, opts().maxRowsPerFragment(7).build());

    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      List<Integer> sizes = ds.getFragments().stream().map(Fragment::countRows).toList();
      assertEquals(120, sizes.stream().mapToInt(Integer::intValue).sum());
      assertTrue(sizes.stream().allMatch(n -> n <= 7), sizes.toString());
    }
  }

  private List<String> firstRows(String uri, int n) {
    List<String> out = new ArrayList<>();
    for (Row r : spark.read().format("lance").load(uri)
        .orderBy("__source_row_id", "__child_index").limit(n).collectAsList()) {
      out.add(r.mkString("|"));
    }
    out.sort(null);
    return out;
  }

  @Test
  void outputLimitCapsTheViewExactlyAndStaysExactIncrementally() {
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    String full = newView(spark, dir, "full", source, def);
    RefreshOptions limit = opts().outputLimit(50L).sourceTaskSize(4).build();

    ChunkerFixture.refresh(spark, source, view, def, limit);
    ChunkerFixture.refresh(spark, source, full, def, RefreshOptions.DEFAULTS);
    assertEquals(50, content(spark, view).size());
    assertEquals(firstRows(full, 50), content(spark, view));

    // Free 9 rows at the front, change a parent in the middle, append more at the end.
    SourceTables.delete(source, "id < 3");
    SourceTables.update(source, List.of(new SourceTables.Doc(5, "only", "odd")));
    SourceTables.append(source, SourceTables.docs(40, 45, i -> "z" + i), 10);
    ChunkerFixture.refresh(spark, source, view, def, limit);
    ChunkerFixture.refresh(spark, source, full, def, RefreshOptions.DEFAULTS);
    assertEquals(50, content(spark, view).size());
    assertEquals(firstRows(full, 50), content(spark, view));

    // A larger limit takes in the parents cut before.
    ChunkerFixture.refresh(spark, source, view, def, opts().outputLimit(1000L).build());
    assertEquals(content(spark, full), content(spark, view));
  }

  @Test
  void forceWithOutputLimitRebuildsTheFirstRowsExactly() {
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    String full = newView(spark, dir, "full", source, def);
    ChunkerFixture.refresh(spark, source, view, def, opts().outputLimit(50L).build());
    ChunkerFixture.refresh(spark, source, full, def, RefreshOptions.DEFAULTS);

    ChunkerRefreshResult r = ChunkerFixture.refresh(spark, source, view, def,
        opts().outputLimit(30L).force(true).build());

    assertEquals(50, r.rowsDeleted(), "every old row is replaced");
    assertEquals(30, r.rowsInserted());
    assertEquals(firstRows(full, 30), content(spark, view));
  }

  @Test
  void shippedTextSplitterRunsFromItsOptions() {
    FunctionEnvelope f = FunctionEnvelope.java(TextSplitter.class.getName(), "text_splitter",
        "1", LanceArrowUtils.toArrowSchema(TextSplitter.OUTPUT, "UTC", false), List.of("doc"),
        false, Map.of("chunk_size", "4", "overlap", "1"));
    var def = new ChunkerDefinition(List.of(new SourceQuery.OutputColumn("id", "id"),
        new SourceQuery.OutputColumn("doc", "doc")), "id = 7", f, null, true);
    String view = newView(spark, dir, "v", source, def);

    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);

    long sid = SourceTables.rowIds(source).get(7L);
    // "a7 b7 c7": windows of 4 with 1 overlap; doc inherited because inherit_input_columns.
    assertEquals(List.of(sid + "|0|7|a7 b7 c7|a7 b|0", sid + "|1|7|a7 b7 c7|b7 c|3",
        sid + "|2|7|a7 b7 c7|c7|6"), content(spark, view));
  }

  @Test
  void shippedArraySplitterRunsOverAProjectedArray() {
    ArraySplitter splitter = new ArraySplitter();
    var input = new org.apache.spark.sql.types.StructType().add("words",
        org.apache.spark.sql.types.DataTypes.createArrayType(
            org.apache.spark.sql.types.DataTypes.StringType, true));
    FunctionEnvelope f = FunctionEnvelope.java(ArraySplitter.class.getName(), "array_splitter",
        "1", LanceArrowUtils.toArrowSchema(splitter.outputSchema(Map.of(), input), "UTC",
            false), List.of("words"), false, Map.of("size", "2"));
    var def = new ChunkerDefinition(List.of(new SourceQuery.OutputColumn("id", "id"),
        new SourceQuery.OutputColumn("words", "split(doc, ' ')")), "id < 2", f, null, false);
    String view = newView(spark, dir, "v", source, def);

    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);

    Map<Long, Long> ids = SourceTables.rowIds(source);
    List<String> expected = new ArrayList<>(List.of(
        ids.get(0L) + "|0|0|[a0, b0]|0", ids.get(0L) + "|1|0|[c0]|2",
        ids.get(1L) + "|0|1|[a1, b1]|0", ids.get(1L) + "|1|1|[c1]|2"));
    expected.sort(null);
    List<String> actual = new ArrayList<>();
    for (Row r : spark.read().format("lance").load(view).collectAsList()) {
      actual.add(r.getLong(0) + "|" + r.getInt(1) + "|" + r.getLong(2) + "|" + r.getList(3)
          + "|" + r.getInt(4));
    }
    actual.sort(null);
    assertEquals(expected, actual);
  }
}
