package io.lancerest.spark.mv.chunker;

import static io.lancerest.spark.mv.chunker.ChunkerFixture.content;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.definition;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.newView;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.RefreshOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;

/**
 * A chunker view over 50,000 parents whose row ids are spread out (every fifth row of a
 * 250,000-row source passes its filter), the shape that made its state large: with the sets
 * inline (43 KB of base64) its manifest held 90 KB after the first refresh; it stays under
 * {@link #MANIFEST_BOUND}, and incremental refreshes after an insert, scattered updates and
 * scattered deletes equal the SELECT.
 */
@Tag("slow")
class ChunkerScatteredParentsTest {
  /** What every open of the view reads: its manifest must not grow with the parents. */
  static final long MANIFEST_BOUND = 16 * 1024;
  static final int ROWS = 250_000;
  private static SparkSession spark;
  @TempDir Path dir;
  private final RefreshOptions defaults = RefreshOptions.DEFAULTS;
  private String source;

  @BeforeAll
  static void start() {
    spark = ChunkerFixture.spark();
  }

  private static String doc(long id) {
    return "w" + id;
  }

  @Test
  void theManifestStaysSmallAndEveryRefreshEqualsTheSelect() throws IOException {
    source = ChunkerFixture.docsSource(dir, ROWS, ChunkerScatteredParentsTest::doc, 50_000);
    var def = definition(TestChunkers.Words.class, "id % 5 = 0", null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerRefreshResult first = ChunkerFixture.refresh(spark, source, view, def, defaults);
    assertEquals(ROWS / 5, first.parentsExpanded());
    checkManifest(view, "the first refresh");
    assertEquals(expected(def), content(spark, view));

    SourceTables.append(source, SourceTables.docs(ROWS, ROWS + 1000,
        ChunkerScatteredParentsTest::doc), 50_000);
    ChunkerRefreshResult inserted = ChunkerFixture.refresh(spark, source, view, def, defaults);
    assertEquals(200, inserted.parentsExpanded());
    checkManifest(view, "the refresh after an insert");
    assertEquals(expected(def), content(spark, view));

    List<SourceTables.Doc> updates = new ArrayList<>();
    for (long k = 0; k < 500; k++) {
      long id = (k * 997 * 5) % ROWS;
      updates.add(new SourceTables.Doc(id, "u" + id + " v" + id, "even"));
    }
    SourceTables.update(source, updates);
    ChunkerRefreshResult updated = ChunkerFixture.refresh(spark, source, view, def, defaults);
    assertEquals(500, updated.parentsExpanded());
    checkManifest(view, "the refresh after scattered updates");
    assertEquals(expected(def), content(spark, view));

    SourceTables.delete(source, "id % 35 = 0");
    ChunkerRefreshResult deleted = ChunkerFixture.refresh(spark, source, view, def, defaults);
    assertEquals((ROWS + 1000 + 34) / 35, deleted.parentsRemoved(), "every multiple of 35");
    checkManifest(view, "the refresh after scattered deletes");
    assertEquals(expected(def), content(spark, view));
  }

  private static void checkManifest(String view, String after) throws IOException {
    long size = manifestBytes(view);
    // the figure the state's size is judged by, in the test's output
    System.out.println("View manifest after " + after + ": " + size + " bytes");
    assertTrue(size < MANIFEST_BOUND, "after " + after + " the view's manifest holds " + size
        + " bytes");
  }

  /**
   * The view's SELECT, run here: the filtered source rows with their row ids, each doc split
   * by the view's chunker, as the view prints its rows ({@link ChunkerFixture#content}).
   */
  private List<String> expected(ChunkerDefinition def) {
    List<String> out = new ArrayList<>();
    TestChunkers.Words words = new TestChunkers.Words();
    for (Row r : ChunkerRefresh.project(ChunkerRefresh.read(spark,
        ChunkerFixture.tables(source, "unused"), null), def).collectAsList()) {
      Iterator<Row> children = words.chunk(RowFactory.create(r.getString(2)));
      for (int i = 0; children.hasNext(); i++) {
        Row c = children.next();
        out.add(r.getLong(0) + "|" + i + "|" + r.getLong(1) + "|" + c.get(0) + "|" + c.get(1));
      }
    }
    out.sort(null);
    return out;
  }

  /** Bytes of the manifest of the view's latest version. */
  static long manifestBytes(String uri) throws IOException {
    long version;
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      version = ds.version();
    }
    List<Path> found = new ArrayList<>();
    try (var files = Files.list(Path.of(uri, "_versions"))) {
      for (Path p : files.toList()) {
        String name = p.getFileName().toString();
        if (!name.endsWith(".manifest")) {
          continue;
        }
        long n = Long.parseUnsignedLong(name.substring(0, name.length() - ".manifest".length()));
        // V1 names are the version, V2 names count down from 2^64 - 1
        if (n == version || -1L - n == version) {
          found.add(p);
        }
      }
    }
    assertEquals(1, found.size(), "the manifest of version " + version + ": " + found);
    return Files.size(found.get(0));
  }
}
