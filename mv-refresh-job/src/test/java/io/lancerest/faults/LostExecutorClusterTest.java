package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancerest.faults.ViewFaultsFixture.Kind;
import io.lancerest.faults.ViewFaultsFixture.World;
import io.lancerest.testing.ClusterSpark;
import io.lancerest.testing.StandaloneCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 17 item 3: an executor JVM of a standalone cluster killed (SIGKILL, by its process id)
 * in the middle of a refresh of each view kind, while the view's own function runs in it: the
 * query view's SELECT ({@code faults_bang}, written by Spark tasks: {@code localRefreshMaxRows =
 * 0}), the chunker (expanded by Spark tasks: {@code localRefreshMaxParents = 0}) and the UDTF, each slowed down through {@link Injected}'s signal folder
 * until the kill. The Worker starts a new executor and Spark retries the lost tasks; the
 * refresh either completes or fails with a clear error, the view then holds its old or its
 * complete new content, the next refresh converges to a from-scratch view, and no row is
 * duplicated.
 */
@Tag("slow")
class LostExecutorClusterTest {
  private static final String LOCAL_WRITE = "spark.lancerest.mv.query.localRefreshMaxRows";
  private static final String LOCAL_EXPANSION =
      "spark.lancerest.mv.chunker.localRefreshMaxParents";
  static ClusterSpark cluster;
  static ViewFaultsFixture x;
  static ExecutorService driverThread = Executors.newSingleThreadExecutor();

  @BeforeAll
  static void start() {
    cluster = new ClusterSpark();
    x = new ViewFaultsFixture(cluster.master());
    x.f.spark.conf().set(LOCAL_WRITE, "0");
    x.f.spark.conf().set(LOCAL_EXPANSION, "0");
  }

  @AfterAll
  static void stop() {
    driverThread.shutdownNow();
    try {
      if (x != null) {
        x.close();
      }
    } finally {
      cluster.close();
    }
  }

  private static String where(Kind kind) {
    return switch (kind) {
      case QUERY -> "faults_bang";
      case CHUNKER -> "chunker";
      case UDTF -> "udtf";
    };
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void anExecutorKilledMidRefreshLeavesOldOrNewContentAndTheNextRefreshConverges(Kind kind)
      throws Exception {
    World w = x.new World("lost_" + kind.name().toLowerCase()).insert(60);
    w.create(kind, "v");
    long version = w.version("v");
    List<String> before = w.rows("v");
    w.insert(400);
    String where = where(kind);
    Path slow = cluster.signals.resolve("slow-" + where);
    clearStarted();
    Files.writeString(slow, "");
    String view = w.view(ViewFaultsFixture.DIRECT, "v");
    long t0 = System.nanoTime();
    Future<List<Row>> refresh = driverThread.submit(() ->
        x.f.sql("REFRESH MATERIALIZED VIEW " + view));
    long victim;
    try {
      victim = awaitStarted(where, refresh);
      StandaloneCluster.Executor e = cluster.cluster.executor(victim).orElseThrow(() ->
          new AssertionError("the JVM " + victim + " that runs " + where + " is no executor "
              + "of the cluster: " + cluster.cluster.executors()));
      assertTrue(victim != ProcessHandle.current().pid(), "the function runs in the driver");
      cluster.cluster.kill(victim);
      System.out.printf("%s: killed executor %s (pid %d) %d ms into the refresh%n", kind,
          e.executorId(), victim, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    } finally {
      Files.deleteIfExists(slow);
    }
    String outcome;
    try {
      List<Row> r = refresh.get(5, TimeUnit.MINUTES);
      outcome = "completed: " + r;
      assertEquals("DONE", r.get(0).getString(1), r.toString());
      assertEquals(version + 1, w.version("v"), "one commit");
    } catch (ExecutionException failed) {
      Throwable c = failed.getCause();
      outcome = "failed: " + c;
      String msg = String.valueOf(c.getMessage());
      assertTrue(msg.contains("v") && (msg.contains("xecutor") || msg.contains("lost")
          || msg.contains("Lost")), "no clear error: " + c);
      assertEquals(version, w.version("v"), "a failed refresh committed");
      assertEquals(before, w.rows("v"), "a failed refresh changed the view");
      List<Row> again = x.f.sql("REFRESH MATERIALIZED VIEW " + view);
      assertEquals("DONE", again.get(0).getString(1), again.toString());
    } catch (TimeoutException t) {
      refresh.cancel(true);
      fail("the refresh did not end within 5 minutes after the kill;\n" + cluster.cluster.logs());
      return;
    }
    System.out.printf("%s: refresh %s after %d ms%n", kind, outcome,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    // a new executor replaced the killed one
    cluster.awaitExecutors(1);
    assertTrue(cluster.cluster.executors().stream().noneMatch(e -> e.pid() == victim));
    w.assertConverged(kind, "v");
    // and the next refresh (after more source rows) still converges
    w.insert(30);
    x.f.sql("REFRESH MATERIALIZED VIEW " + view);
    w.assertConverged(kind, "v");
  }

  private static void clearStarted() throws IOException {
    try (Stream<Path> s = Files.list(cluster.signals)) {
      for (Path p : s.toList()) {
        if (p.getFileName().toString().startsWith("started-")) {
          Files.delete(p);
        }
      }
    }
  }

  /** The pid of the first executor that reported running {@code where} (bounded). */
  private static long awaitStarted(String where, Future<?> refresh) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    String prefix = "started-" + where + "-";
    while (System.nanoTime() < end) {
      try (Stream<Path> s = Files.list(cluster.signals)) {
        var hit = s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix))
            .findFirst();
        if (hit.isPresent()) {
          return Long.parseLong(hit.get().substring(prefix.length()));
        }
      }
      if (refresh.isDone()) {
        refresh.get();
        fail("the refresh ended before any executor ran " + where);
      }
      Thread.sleep(50);
    }
    fail("within 120 s no executor ran " + where + "; executors " + cluster.cluster.executors()
        + "\n" + cluster.cluster.logs());
    return -1;
  }
}
