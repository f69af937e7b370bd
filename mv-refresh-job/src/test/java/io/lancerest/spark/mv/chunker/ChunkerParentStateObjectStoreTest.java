package io.lancerest.spark.mv.chunker;

import static io.lancerest.spark.mv.chunker.ChunkerFixture.definition;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.fromScratch;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.client.testing.S3ProxyFixture;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.ArrayList;
import java.util.Set;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.WriteParams;

/**
 * A chunker view on S3 (s3proxy, with keys) whose parent sets are too large for its config:
 * their file is written, read and released under the view's location with the view's storage
 * options, and the view equals its SELECT.
 */
@Tag("slow")
class ChunkerParentStateObjectStoreTest {
  private static S3ProxyFixture s3;
  private static SparkSession spark;
  @TempDir Path dir;

  @BeforeAll
  static void start() {
    s3 = S3ProxyFixture.start();
    spark = ChunkerFixture.spark();
  }

  @AfterAll
  static void stop() {
    if (s3 != null) {
      s3.close();
    }
  }

  @Test
  void theStateFileLivesUnderTheViewOnTheStoreAndIsReleasedThere() {
    String source = ChunkerFixture.docsSource(dir, 40_000, i -> "w" + i, 10_000);
    ChunkerDefinition def = definition(TestChunkers.Words.class, "id % 20 = 0", null);
    String view = s3.uri("views/v.lance");
    Map<String, String> storage = s3.storageOptions();
    ViewTables tables = new ViewTables(null, view, storage, source, Map.of());
    try (BufferAllocator a = new RootAllocator()) {
      Dataset.create(a, view, ChunkerRefresh.viewSchema(ChunkerRefresh.read(spark, tables, null),
          def), new WriteParams.Builder().withEnableStableRowIds(true)
          .withStorageOptions(storage).build()).close();
    }
    List<String> files = new java.util.ArrayList<>();
    for (int round = 0; round < 3; round++) {
      SourceTables.append(source, SourceTables.docs(40_000 + round * 100,
          40_100 + round * 100, i -> "w" + i), 10_000);
      ChunkerRefreshResult r = ChunkerRefresh.run(new RefreshContext(spark, view, null, null),
          tables, def, RefreshOptions.DEFAULTS);
      assertEquals(round == 0 ? 2005 : 5, r.parentsExpanded());
      try (BufferAllocator a = new RootAllocator();
          Dataset ds = LanceLocation.of(view, storage).open(a, null)) {
        files.add(ParentState.Pointer.parse(ds.getConfig().get(ParentState.POINTER_KEY))
            .file());
      }
    }
    assertEquals(Set.of("views/v.lance/" + files.get(1), "views/v.lance/" + files.get(2)),
        Set.copyOf(s3.keys("views/v.lance/" + ParentStateFile.DIR)),
        "the files of the last two refreshes; the first one's was released");
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
        rows(LanceLocation.of(view, storage)));
  }

  /** The view's rows as {@link ChunkerFixture#content} prints them, read with lance-core. */
  private static List<String> rows(LanceLocation view) {
    List<String> out = new ArrayList<>();
    try (BufferAllocator a = new RootAllocator(); Dataset ds = view.open(a, null);
        LanceScanner s = ds.newScan(new ScanOptions.Builder().build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        for (int i = 0; i < root.getRowCount(); i++) {
          StringBuilder sb = new StringBuilder();
          for (int c = 0; c < root.getFieldVectors().size(); c++) {
            sb.append(c == 0 ? "" : "|").append(root.getVector(c).getObject(i));
          }
          out.add(sb.toString());
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    out.sort(null);
    return out;
  }
}
