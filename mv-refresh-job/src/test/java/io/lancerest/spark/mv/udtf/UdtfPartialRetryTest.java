package io.lancerest.spark.mv.udtf;

import static io.lancerest.spark.mv.udtf.UdtfFixtures.COUNTS;
import static io.lancerest.spark.mv.udtf.UdtfFixtures.item;
import static io.lancerest.spark.mv.udtf.UdtfFixtures.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import io.lancerest.spark.mv.maintenance.ViewMaintenance;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A UDTF view left PARTIAL is refreshed again at the same source version: only the partitions
 * it skipped are computed (the others come from the PARTIAL refresh's checkpoints), the view
 * then holds what a refresh from scratch gives, and the errors table holds one row per skipped
 * partition per refresh that skipped it. The function fails on the partitions an "outage" file
 * names, and records each of its calls as a file of its own: what the tests count.
 *
 * <p>Source {@code items(category, name, price)}: categories a (3 rows), b (2), c (2), d (1)
 * and NULL (2), at version 1.
 */
class UdtfPartialRetryTest {
  private static SparkSession spark;
  @TempDir Path dir;
  private String source;
  private ViewTables view;
  private Path outage;
  private Path calls;

  private static final List<String> ALL_COUNTS = UdtfFixtures.ITEM_COUNTS;

  @BeforeAll
  static void start() {
    spark = UdtfFixtures.spark();
  }

  @BeforeEach
  void tables() throws IOException {
    source = dir.resolve("items.lance").toString();
    UdtfFixtures.writeTenItems(spark, source);
    view = view("v");
    outage = dir.resolve("outage");
    calls = Files.createDirectories(dir.resolve("calls"));
  }

  /** An empty view table {@code name}.lance over the source (what CREATE makes). */
  private ViewTables view(String name) {
    String uri = dir.resolve(name + ".lance").toString();
    UdtfFixtures.createView(uri, COUNTS);
    return new ViewTables("ns." + name, uri, Map.of(), source, Map.of());
  }

  /** The flaky function, skipping what fails; the same definition for every refresh. */
  private UdtfDefinition flaky(Path callsDir) {
    return UdtfDefinition.of("flaky", "1", FlakyUdtf.class, UdtfFixtures.arrow(COUNTS))
        .withPartitionBy("category")
        .withOptions(Map.of("outage", outage.toString(), "calls", callsDir.toString(),
            "vanish", dir.resolve("vanish").toString()))
        .withErrorHandling(new ErrorHandling(null,
            List.of(ErrorHandling.Rule.of("outage", ErrorHandling.Action.SKIP)), null, null,
            null));
  }

  private UdtfRefreshResult refresh(ViewTables t, UdtfDefinition def, RefreshOptions options) {
    UdtfSource src = UdtfFixtures.wholeTable(source, UdtfFixtures.latestVersion(source));
    return UdtfFixtures.refresh(spark, src, t, def, options);
  }

  private UdtfRefreshResult refresh(String jobId) {
    return refresh(view, flaky(calls), RefreshOptions.builder().jobId(jobId).build());
  }

  /** The partitions whose function calls fail from now on (none: the outage is over). */
  private void failing(String... keys) throws IOException {
    if (keys.length == 0) {
      Files.delete(outage);
    } else {
      Files.writeString(outage, String.join("\n", keys));
    }
  }

  /** What a view created now over the source holds: a refresh from scratch, nothing failing. */
  private List<String> fromScratch() throws IOException {
    ViewTables fresh = view("fresh");
    UdtfRefreshResult r = refresh(fresh, flaky(Files.createDirectories(dir.resolve("fresh-calls"))),
        RefreshOptions.DEFAULTS);
    assertEquals(List.of(JobStatus.DONE, 0L), List.of(r.status(), r.reused()));
    return rows(spark, fresh.viewUri(), null);
  }

  /** Calls of the function so far, by partition key. */
  private Map<String, Integer> callsByKey() {
    return FlakyUdtf.callsByKey(calls);
  }

  /** {@code job_id|partition_key} of every row of the view's errors table, sorted. */
  private List<String> errorRows() {
    return spark.read().format("lance").option("path", view.errorsTableUri()).load()
        .collectAsList().stream()
        .map(e -> e.getAs("job_id") + "|" + e.getAs("partition_key")).sorted().toList();
  }

  private List<String> dataFiles() throws IOException {
    try (Stream<Path> files = Files.list(Path.of(view.viewUri(), "data"))) {
      return files.map(Path::toString).sorted().toList();
    }
  }

  private Path checkpoints() {
    return Path.of(PartitionCheckpoints.location(view.viewUri()));
  }

  @Test
  void aPartialViewRetriedAtTheSameSourceVersionComputesOnlyTheSkippedPartitions()
      throws IOException {
    failing("b", "d");
    UdtfRefreshResult first = refresh("job-1");
    assertEquals(JobStatus.PARTIAL, first.status());
    assertEquals(List.of("b", "d"), first.skipped().stream()
        .map(UdtfRefreshResult.SkippedPartition::partitionKey).sorted().toList());
    assertEquals(List.of("[a,3,6]", "[c,2,300]", "[null,2,11]"), rows(spark, view.viewUri(),
        null));
    long sourceVersion = UdtfFixtures.latestVersion(source);
    RefreshPlan plan = UdtfRefresh.explain(spark, view, SourceQuery.of(List.of("ns", "items"),
        List.of("ns"), Stream.of("category", "name", "price")
            .map(c -> new SourceQuery.OutputColumn(c, c)).toList(), null, null), flaky(calls),
        RefreshOptions.DEFAULTS);
    assertEquals("the last refresh skipped partitions at source version " + sourceVersion
        + "; they are tried again, the partitions it checkpointed are reused; 5 partitions in "
        + "all", plan.reason());

    // Same source version; partition b works again, d still fails.
    failing("d");
    UdtfRefreshResult second = refresh("job-2");
    assertEquals(sourceVersion, second.sourceVersion());
    assertEquals(JobStatus.PARTIAL, second.status());
    assertEquals(List.of(5L, 1L, 1, 3L, 2L), List.of(second.partitions(), second.computed(),
        second.skipped().size(), second.reused(), second.udtfCalls()), "b computed, d tried "
        + "again and skipped, the other three reused");
    assertEquals(Map.of("a", 1, "b", 2, "c", 1, "d", 2, "null", 1), callsByKey());
    assertTrue(Files.isDirectory(checkpoints()), "a PARTIAL commit keeps the checkpoints");
    assertEquals(List.of("[a,3,6]", "[b,2,30]", "[c,2,300]", "[null,2,11]"),
        rows(spark, view.viewUri(), null));

    // The outage is over: only d is computed, and the view is whole.
    failing();
    UdtfRefreshResult third = refresh("job-3");
    assertEquals(List.of(JobStatus.DONE, 1L, 4L, 1L), List.of(third.status(), third.computed(),
        third.reused(), third.udtfCalls()));
    assertEquals(Map.of("a", 1, "b", 2, "c", 1, "d", 3, "null", 1), callsByKey());
    assertEquals(ALL_COUNTS, rows(spark, view.viewUri(), null));
    assertEquals(fromScratch(), rows(spark, view.viewUri(), null), "no row lost or doubled");
    assertFalse(Files.exists(checkpoints()), "the DONE commit dropped the checkpoints");
    assertEquals("job-3", UdtfFixtures.schemaMetadata(view.viewUri())
        .get(UdtfRefresh.LAST_JOB_KEY));

    // One row per skipped partition per refresh that skipped it: the DONE job added none, so
    // the view's last job has no current error; b, retried successfully by job-2, was
    // recorded by job-1 only.
    assertEquals(List.of("job-1|b", "job-1|d", "job-2|d"), errorRows());

    assertEquals(JobStatus.SKIPPED, refresh("job-4").status(), "now up to date");
  }

  @Test
  void aPartialViewWhoseSourceChangedIsComputedAgainInFull() throws IOException {
    failing("b", "d");
    assertEquals(JobStatus.PARTIAL, refresh("job-1").status());
    UdtfFixtures.writeItems(spark, source, List.of(item("a", "a4", 4), item("b", "b3", 30),
        item("e", "e1", 7)), true);
    failing();

    UdtfRefreshResult r = refresh("job-2");

    assertEquals(UdtfFixtures.latestVersion(source), r.sourceVersion());
    assertEquals(List.of(JobStatus.DONE, 6L, 6L, 0L), List.of(r.status(), r.partitions(),
        r.computed(), r.reused()), "the checkpoints of the old source version are not reused");
    assertEquals(Map.of("a", 2, "b", 2, "c", 2, "d", 2, "e", 1, "null", 2), callsByKey());
    assertEquals(List.of("[a,4,10]", "[b,3,60]", "[c,2,300]", "[d,1,1000]", "[e,1,7]",
        "[null,2,11]"), rows(spark, view.viewUri(), null));
    assertEquals(fromScratch(), rows(spark, view.viewUri(), null));
    assertFalse(Files.exists(checkpoints()));
    assertEquals(List.of("job-1|b", "job-1|d"), errorRows());
  }

  /**
   * The PARTIAL version's files are the checkpoints' own. Once maintenance compacted the view,
   * only that older version holds them, and a cleanup of old versions (VACUUM, a short
   * retention) may remove them while the retry computes the skipped partitions: the retry must
   * not commit fragments without their data. Here the function, computing b, removes them.
   */
  @Test
  void filesRemovedWhileTheRetryComputesAreComputedAgainNotCommittedMissing()
      throws IOException {
    failing("b");
    assertEquals(JobStatus.PARTIAL, refresh("job-1").status());
    failing();
    List<String> partialFiles = dataFiles();
    ViewMaintenance.run(LanceLocation.of(view.viewUri(), Map.of()), k -> null, Map.of(), true,
        null);
    assertFalse(partialFiles.containsAll(dataFiles()), "the compaction wrote files of its own");
    Files.writeString(dir.resolve("vanish"), String.join("\n", partialFiles));

    UdtfRefreshResult r = refresh("job-2");

    assertFalse(Files.exists(dir.resolve("vanish")), "the files were removed during the retry");
    assertEquals(JobStatus.DONE, r.status());
    assertEquals(ALL_COUNTS, rows(spark, view.viewUri(), null));
    assertEquals(fromScratch(), rows(spark, view.viewUri(), null), "no row lost or doubled");
    // the commit found the files gone and the attempt started again: a, c, d and NULL were
    // computed again; b's own fragment, written by the first attempt, was there to reuse
    assertEquals(Map.of("a", 2, "b", 2, "c", 2, "d", 2, "null", 2), callsByKey());
  }

  @Test
  void forceAfterAPartialRefreshComputesEveryPartition() throws IOException {
    failing("b");
    assertEquals(JobStatus.PARTIAL, refresh("job-1").status());
    failing();

    UdtfRefreshResult r = refresh(view, flaky(calls),
        RefreshOptions.builder().jobId("job-2").force(true).build());

    assertEquals(List.of(JobStatus.DONE, 5L, 0L), List.of(r.status(), r.computed(),
        r.reused()), "force rebuilds: no partition comes from a checkpoint");
    assertEquals(Map.of("a", 2, "b", 2, "c", 2, "d", 2, "null", 2), callsByKey());
    assertEquals(ALL_COUNTS, rows(spark, view.viewUri(), null));
    assertEquals(List.of("job-1|b"), errorRows());
  }

  /**
   * Counts and sums {@code price} per partition, like a function calling a service: while the
   * file {@code outage} exists, the partitions it names (one key a line) fail. Each call leaves
   * a file {@code <key>-<uuid>} in the directory {@code calls}. {@link #enter} makes any function
   * flaky that way.
   */
  public static final class FlakyUdtf implements BatchUdtf {
    @Override
    public Iterator<Row> process(UdtfContext ctx, Iterator<Row> rows) {
      enter(ctx);
      int priceIndex = ctx.inputSchema().fieldIndex("price");
      long n = 0;
      long total = 0;
      while (rows.hasNext()) {
        n++;
        total += rows.next().getLong(priceIndex);
      }
      return List.of(RowFactory.create(ctx.partitionKey(), n, total)).iterator();
    }

    /**
     * Records the call of {@code ctx}; throws when its partition is out. When the file {@code
     * vanish} exists, its call for partition b first deletes the files it lists, and it.
     */
    static void enter(UdtfContext ctx) {
      String key = String.valueOf(ctx.partitionKey());
      Path outage = Path.of(ctx.option("outage", null));
      String vanish = ctx.option("vanish", null);
      try {
        if (vanish != null && key.equals("b") && Files.exists(Path.of(vanish))) {
          for (String f : Files.readAllLines(Path.of(vanish))) {
            Files.deleteIfExists(Path.of(f));
          }
          Files.delete(Path.of(vanish));
        }
        Files.createFile(Path.of(ctx.option("calls", null))
            .resolve(key + "-" + UUID.randomUUID().toString().replace("-", "")));
        if (Files.exists(outage) && Files.readAllLines(outage).contains(key)) {
          throw new IllegalStateException("outage on " + key);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    static Map<String, Integer> callsByKey(Path calls) {
      try (Stream<Path> files = Files.list(calls)) {
        Map<String, Integer> out = new TreeMap<>();
        files.map(f -> f.getFileName().toString())
            .forEach(f -> out.merge(f.substring(0, f.lastIndexOf('-')), 1, Integer::sum));
        return out;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
