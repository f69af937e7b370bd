package io.lancerest.spark.mv.chunker;

import static io.lancerest.spark.mv.chunker.ChunkerFixture.content;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.definition;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.fromScratch;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.newView;
import static io.lancerest.spark.mv.chunker.ChunkerFixture.version;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.RefreshOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;

/**
 * Refreshes in a child JVM: one killed in the middle of writing fragments, one expanding a
 * parent with 10,000 children of 16 Ki characters (164 MB of text, 328 MB as Java strings)
 * under a 256 MiB heap and a 64 MiB Arrow cap per task.
 */
@Tag("slow")
class ChunkerChildJvmTest {
  private static SparkSession spark;
  @TempDir Path dir;

  @BeforeAll
  static void start() {
    spark = ChunkerFixture.spark();
  }


  private static Process child(List<String> jvmArgs, String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmArgs);
    for (String opens : List.of("java.base/java.lang", "java.base/java.lang.invoke",
        "java.base/java.lang.reflect", "java.base/java.io", "java.base/java.net",
        "java.base/java.nio", "java.base/java.util", "java.base/java.util.concurrent",
        "java.base/java.util.concurrent.atomic", "java.base/sun.nio.ch",
        "java.base/sun.nio.cs", "java.base/sun.security.action", "java.base/sun.util.calendar")) {
      cmd.add("--add-opens=" + opens + "=ALL-UNNAMED");
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(ChildRefreshMain.class.getName());
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.PIPE).start();
  }

  private static long dataFiles(String view) throws IOException {
    try (Stream<Path> s = Files.list(Path.of(view, "data"))) {
      return s.count();
    }
  }

  @Test
  void aJobKilledMidWriteLeavesTheViewAsItWasAndARerunIsExact() throws Exception {
    String source = dir.resolve("docs.lance").toString();
    SourceTables.create(source);
    SourceTables.append(source, SourceTables.docs(0, 10, i -> "a" + i + " b" + i), 10);
    var def = definition(TestChunkers.Words.class, null, null);
    String view = newView(spark, dir, "v", source, def);
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    long version = version(view);
    List<String> before = content(spark, view);
    long filesBefore = dataFiles(view);
    SourceTables.delete(source, "id = 2");
    SourceTables.append(source, SourceTables.docs(10, 40, i -> "c" + i + " d" + i + " e" + i),
        10);

    Path marker = dir.resolve("marker");
    Process p = child(List.of("-Xmx1g", "-Dchunker.marker=" + marker),
        TestChunkers.BlockAfter30.class.getName(), source, view, "3", "4");
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (!Files.exists(marker) && p.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertTrue(Files.exists(marker), "the child reached the middle of the expansion: "
          + new String(p.getInputStream().readNBytes(p.getInputStream().available())));
      // the work items done before the blocked one are written by the task's writer thread
      long written = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (dataFiles(view) <= filesBefore && p.isAlive() && System.nanoTime() < written) {
        Thread.sleep(50);
      }
      assertTrue(dataFiles(view) > filesBefore, "fragments were written before the kill");
    } finally {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }

    assertEquals(version, version(view));
    assertEquals(before, content(spark, view));
    ChunkerFixture.refresh(spark, source, view, def, RefreshOptions.DEFAULTS);
    assertEquals(fromScratch(spark, dir, source, def, RefreshOptions.DEFAULTS),
        content(spark, view));
  }

  @Test
  void aParentWithTenThousandLargeChildrenStreamsUnderASmallHeap() throws Exception {
    String source = dir.resolve("one.lance").toString();
    SourceTables.create(source);
    SourceTables.append(source, List.of(new SourceTables.Doc(1, "big", "odd")), 10);
    var def = definition(TestChunkers.HugeFanOut.class, null, null);
    String view = newView(spark, dir, "v", source, def);

    Process p = child(List.of("-Xmx256m"), TestChunkers.HugeFanOut.class.getName(), source,
        view, "1024", "1000", String.valueOf(64L << 20));
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(300, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    String result = out.lines().filter(l -> l.startsWith("RESULT ")).findFirst().orElseThrow();
    String[] f = result.split(" ");
    assertEquals("10000", f[1]);
    assertTrue(Long.parseLong(f[2]) <= 1000, "at most max_rows_per_fragment rows buffered: "
        + result);
    assertTrue(Long.parseLong(f[3]) <= 256L << 20, "the heap really was small: " + result);
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(view, a)) {
      assertEquals(10_000, ds.countRows());
      assertTrue(ds.getFragments().stream().allMatch(fr -> fr.countRows() <= 1000));
    }
  }
}
