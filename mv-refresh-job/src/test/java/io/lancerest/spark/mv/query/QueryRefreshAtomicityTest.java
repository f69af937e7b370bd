package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryViewTables.location;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.engine.EngineFixture;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.result.RefreshResult;
import io.lancerest.testing.OneBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.lance.Dataset;
import org.lance.merge.MergeInsertParams;

/**
 * Atomicity of query-view refresh: a failing task, a failure before the commit, a killed JVM,
 * two concurrent refreshes, and in-place updates of source rows (same row id).
 */
@Tag("slow")
class QueryRefreshAtomicityTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  @AfterEach
  void clearHooks() {
    f.spark.conf().unset(LocalRefreshWrite.MAX_ROWS_CONF);
  }

  private static final String SELECT = "SELECT id, concat(name, '!') AS n, score + 1 AS s1 "
      + "FROM %s WHERE score %% 3 <> 0";

  /** A source with {@code fragments} inserts of {@code rows} rows, and a populated view. */
  private static String[] viewOver(String ns, int fragments, int rows) {
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, score INT)");
    for (int i = 0; i < fragments; i++) {
      insert(src, (long) i * rows, rows);
    }
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS " + String.format(SELECT, src));
    return new String[] {src, v};
  }

  private static void insert(String table, long from, int rows) {
    f.sql("INSERT INTO " + table + " SELECT id, concat('n', id), CAST(id % 17 AS INT) FROM "
        + "range(" + from + ", " + (from + rows) + ")");
  }

  private static void assertConverged(String src, String v) {
    QueryViewTables.assertSameAsSelect(f, SELECT, "id, n, s1", src, v);
  }

  private static long viewVersion(String ns) {
    return Long.parseLong(f.sql("SHOW TBLPROPERTIES lance." + ns + ".v ('current-version')")
        .get(0).getString(1));
  }

  private static long dataFiles(String ns) throws IOException {
    Path data = Path.of(java.net.URI.create(location(f, ns, "v").replaceFirst("^/", "file:///")))
        .resolve("data");
    try (Stream<Path> s = Files.list(data)) {
      return s.count();
    }
  }

  @Test
  void aTaskFailingAfterItWroteFragmentsCommitsNothing() throws IOException {
    String ns = f.namespace("tf");
    String[] t = viewOver(ns, 2, 100);
    // the write tasks are under test, not the driver-side write of small changes
    f.spark.conf().set(LocalRefreshWrite.MAX_ROWS_CONF, "0");
    insert(t[0], 1000, 60_000);
    f.sql("DELETE FROM " + t[0] + " WHERE id < 10");
    long version = viewVersion(ns);
    List<String> before = f.rows("SELECT * FROM " + t[1]);
    long files = dataFiles(ns);
    java.util.Map<Integer, Integer> batches = new java.util.concurrent.ConcurrentHashMap<>();
    // The third batch of a task fails: by then lance-core has written its first two batches
    // as fragments of at most 5,000 rows.
    // (each task counts in its own copy of the map: the listener travels with the task)
    Probes failing = new Probes().afterTaskBatch(partition -> {
      if (batches.merge(partition, 1, Integer::sum) == 3) {
        throw new IllegalStateException("injected task failure");
      }
    });
    // the write failed, not the SELECT: an engine error naming the first cause
    io.lancerest.spark.mv.error.MaterializedViewException e = assertThrows(
        io.lancerest.spark.mv.error.MaterializedViewException.class, () -> f.views()
        .refresh(List.of(ns, "v"), RefreshOptions.fromMap(java.util.Map.of(
            "max_rows_per_fragment", "5000")), failing));
    assertFalse(e instanceof FunctionFailedException, e.toString());
    assertTrue(e.getMessage().endsWith(") failed in a Spark task: "
        + "java.lang.IllegalStateException: injected task failure. Nothing was committed; the "
        + "view is unchanged"), e.getMessage());
    assertTrue(dataFiles(ns) >= files + 3, "the task wrote fragments before it failed");
    assertEquals(version, viewVersion(ns));
    assertEquals(before, f.rows("SELECT * FROM " + t[1]));

    f.sql("REFRESH MATERIALIZED VIEW " + t[1]);
    assertConverged(t[0], t[1]);
  }

  @Test
  void aListenerThatDoesNotListenToBatchesNeedNotBeSerializable() {
    String ns = f.namespace("ser");
    String[] t = viewOver(ns, 1, 50);
    f.spark.conf().set(LocalRefreshWrite.MAX_ROWS_CONF, "0"); // the Spark write path
    insert(t[0], 50, 20);
    Thread driverOnly = Thread.currentThread(); // not serializable
    java.util.concurrent.atomic.AtomicInteger commits =
        new java.util.concurrent.atomic.AtomicInteger();
    io.lancerest.spark.mv.RefreshListener listener = new io.lancerest.spark.mv.RefreshListener() {
      @Override
      public void beforeCommit() {
        assertEquals(driverOnly, Thread.currentThread());
        commits.incrementAndGet();
      }
    };
    RefreshResult r = f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS, listener);
    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertEquals(1, commits.get());
    assertConverged(t[0], t[1]);
  }

  @Test
  void aFailureJustBeforeTheCommitLeavesThePreviousVersion() throws Exception {
    String ns = f.namespace("bc");
    String[] t = viewOver(ns, 1, 50);
    insert(t[0], 50, 20);
    f.sql("UPDATE " + t[0] + " SET score = 4 WHERE id = 3");
    long version = viewVersion(ns);
    List<String> before = f.rows("SELECT * FROM " + t[1]);
    Probes crash = new Probes().beforeCommit(() -> {
      throw new IllegalStateException("crash before commit");
    });
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS, crash));
    assertEquals("crash before commit", e.getMessage());
    assertEquals(version, viewVersion(ns));
    assertEquals(QueryViewTables.indexedFragments(f, ns), QueryViewTables.indexFolders(f, ns),
        "the indexes of the fragments that were not committed are gone");
    assertEquals(before, f.rows("SELECT * FROM " + t[1]));
    f.sql("REFRESH MATERIALIZED VIEW " + t[1]);
    assertConverged(t[0], t[1]);
  }

  @Test
  void twoConcurrentRefreshesNeitherDuplicateNorLoseRows() throws Exception {
    String ns = f.namespace("cc");
    String[] t = viewOver(ns, 1, 60);
    insert(t[0], 60, 30);
    f.sql("DELETE FROM " + t[0] + " WHERE id BETWEEN 5 AND 9");
    CountDownLatch both = new CountDownLatch(2);
    AtomicInteger commits = new AtomicInteger();
    Probes meet = new Probes().beforeCommit(() -> {
      if (commits.incrementAndGet() <= 2) {
        both.countDown();
        try {
          both.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<RefreshResult>> runs = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        runs.add(pool.submit(() -> f.views().refresh(List.of(ns, "v"),
            RefreshOptions.DEFAULTS, meet)));
      }
      List<RefreshResult.JobStatus> statuses = new ArrayList<>();
      for (Future<RefreshResult> r : runs) {
        statuses.add(r.get(180, TimeUnit.SECONDS).status());
      }
      statuses.sort(null);
      // both computed against the same view version; the loser's commit conflicted, it
      // recomputed against the winner's version and found nothing left to do (no commit)
      assertEquals(List.of(RefreshResult.JobStatus.DONE, RefreshResult.JobStatus.SKIPPED),
          statuses);
      assertEquals(2, commits.get());
    } finally {
      pool.shutdownNow();
    }
    assertConverged(t[0], t[1]);
    // the loser's fragments were never committed: their indexes went with its attempt
    assertEquals(QueryViewTables.indexedFragments(f, ns), QueryViewTables.indexFolders(f, ns));
  }

  @Test
  void rowsUpdatedInPlaceKeepTheirRowIdAndAreReprojected() throws Exception {
    String ns = f.namespace("ip");
    String[] t = viewOver(ns, 1, 30);
    // merge insert updates matched rows in place: same _rowid, newer last-updated version
    mergeUpdate(location(f, ns, "src"), new long[] {1, 2, 4}, new int[] {5, 3, 8});
    f.spark.catalog().refreshTable(t[0]);
    RefreshResult r = f.views().refresh(List.of(ns, "v"), RefreshOptions.DEFAULTS);
    assertEquals(RefreshResult.JobStatus.DONE, r.status());
    assertConverged(t[0], t[1]);
    assertTrue(f.rows("SELECT id, n FROM " + t[1] + " WHERE id IN (1, 2, 4)")
        .contains("1|upd1!"), f.rows("SELECT id, n FROM " + t[1]).toString());
  }

  @Test
  void aJobKilledMidWriteLeavesTheViewAsItWasAndTheNextRefreshConverges() throws Exception {
    String ns = f.namespace("kill");
    String[] t = viewOver(ns, 1, 100);
    insert(t[0], 100, 30_000);
    long version = viewVersion(ns);
    List<String> before = f.rows("SELECT * FROM " + t[1]);
    long files = dataFiles(ns);
    Path marker = Files.createTempDirectory("kill").resolve("marker");
    Process p = child(f.uri, ns, "v", marker.toString());
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
      while (!Files.exists(marker) && p.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertTrue(Files.exists(marker), "the child reached the middle of the write: "
          + new String(p.getInputStream().readNBytes(p.getInputStream().available()),
              StandardCharsets.UTF_8));
      assertTrue(dataFiles(ns) > files, "fragments were written before the kill");
    } finally {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    assertEquals(version, viewVersion(ns));
    assertEquals(before, f.rows("SELECT * FROM " + t[1]));
    // The job log: the killed driver's job was RUNNING; once its heartbeat is older than the
    // timeout, it is shown FAILED (driver lost).
    f.spark.conf().set("spark.lancerest.mv.jobs.heartbeatTimeout", "1s");
    try {
      org.apache.spark.sql.Row job = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (System.nanoTime() < deadline) {
        job = f.sql("SHOW JOBS FOR " + t[1]).stream()
            .filter(r -> "child-job".equals(r.getString(0))).findFirst().orElse(null);
        if (job != null && "FAILED".equals(job.getString(3))) {
          break;
        }
        Thread.sleep(200);
      }
      assertTrue(job != null && "FAILED".equals(job.getString(3)), "within 30 s, the killed "
          + "driver's job shown FAILED: " + job);
      assertTrue(job.getString(11).startsWith("driver lost: no heartbeat since "),
          job.getString(11));
    } finally {
      f.spark.conf().unset("spark.lancerest.mv.jobs.heartbeatTimeout");
    }
    f.sql("REFRESH MATERIALIZED VIEW " + t[1]);
    assertConverged(t[0], t[1]);
  }

  private static Process child(String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx1g");
    for (String opens : List.of("java.base/java.lang", "java.base/java.lang.invoke",
        "java.base/java.lang.reflect", "java.base/java.io", "java.base/java.net",
        "java.base/java.nio", "java.base/java.util", "java.base/java.util.concurrent",
        "java.base/java.util.concurrent.atomic", "java.base/sun.nio.ch",
        "java.base/sun.nio.cs", "java.base/sun.security.action", "java.base/sun.util.calendar")) {
      cmd.add("--add-opens=" + opens + "=ALL-UNNAMED");
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(ChildQueryRefreshMain.class.getName());
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  /** Sets name = 'upd<id>' and the given score on rows matched by id, in place. */
  static void mergeUpdate(String uri, long[] ids, int[] scores) throws Exception {
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(uri, a)) {
      Schema schema = ds.getSchema();
      try (VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(schema.getFields()), a)) {
        root.allocateNew();
        for (int i = 0; i < ids.length; i++) {
          ((BigIntVector) root.getVector("id")).setSafe(i, ids[i]);
          ((VarCharVector) root.getVector("name")).setSafe(i,
              ("upd" + ids[i]).getBytes(StandardCharsets.UTF_8));
          ((IntVector) root.getVector("score")).setSafe(i, scores[i]);
        }
        root.setRowCount(ids.length);
        try (ArrowReader reader = new OneBatch(a, root);
            ArrowArrayStream stream = ArrowArrayStream.allocateNew(a)) {
          Data.exportArrayStream(a, reader, stream);
          MergeInsertParams params = new MergeInsertParams(List.of("id")).withMatchedUpdateAll()
              .withNotMatched(MergeInsertParams.WhenNotMatched.DoNothing);
          ds.mergeInsert(params, stream).dataset().close();
        }
      }
    }
  }
}
