package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.faults.ViewFaultsFixture.Kind;
import io.lancerest.faults.ViewFaultsFixture.World;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Concurrent refreshes in one SparkSession: 4 of one view plus 4 of 4 other views (query,
 * chunker, UDTF, query), all started at once through the proxied catalog. Every refresh either
 * commits (DONE), finds the work done by a concurrent one (SKIPPED), or fails with an error
 * that says another commit got there first; every view then equals its from-scratch build, with
 * no duplicates, and the shared view gained exactly one version per DONE. The long profile adds
 * a shared chunker view and a shared UDTF view (4 refreshes each) and two more rounds.
 */
@Tag("slow")
class ViewLoadTest {
  static ViewFaultsFixture x;

  @BeforeAll
  static void start() {
    x = new ViewFaultsFixture();
  }

  @AfterAll
  static void stop() {
    x.close();
  }

  /** A refresh's outcome: its status, or the message of the error it failed with. */
  private record Outcome(String view, String status, String error) {}

  @Test
  void concurrentRefreshesOfOneViewAndOfOtherViews() throws Exception {
    World w = x.new World("load").insert(200);
    Map<String, Kind> shared = new LinkedHashMap<>();
    shared.put("s_query", Kind.QUERY);
    if (ViewFaultsFixture.LONG) {
      shared.put("s_chunker", Kind.CHUNKER);
      shared.put("s_udtf", Kind.UDTF);
    }
    Map<String, Kind> others = new LinkedHashMap<>(Map.of("o_query1", Kind.QUERY,
        "o_chunker", Kind.CHUNKER, "o_udtf", Kind.UDTF, "o_query2", Kind.QUERY));
    Map<String, Kind> all = new LinkedHashMap<>(shared);
    all.putAll(others);
    all.forEach((name, kind) -> w.create(kind, name));
    MaterializedViews views = x.flakyViews();
    int rounds = ViewFaultsFixture.LONG ? 3 : 1;
    for (int round = 0; round < rounds; round++) {
      w.insert(300);
      Map<String, Long> before = new LinkedHashMap<>();
      shared.keySet().forEach(v -> before.put(v, w.version(v)));
      List<String> jobs = new ArrayList<>();
      shared.keySet().forEach(v -> {
        for (int i = 0; i < 4; i++) {
          jobs.add(v);
        }
      });
      jobs.addAll(others.keySet());
      List<Outcome> outcomes = run(views, w, jobs);
      System.out.println("LOAD round " + round + ": " + outcomes);
      for (Outcome o : outcomes) {
        if (o.error != null) {
          assertTrue(shared.containsKey(o.view), "a view refreshed alone failed: " + o);
          assertTrue(o.error.contains("was modified by another commit")
              || o.error.contains("other writers kept committing"), "not a clear "
              + "concurrent-modification error: " + o);
        } else {
          assertTrue(o.status.equals("DONE") || o.status.equals("SKIPPED") && shared.containsKey(
              o.view), o.toString());
        }
      }
      for (String v : shared.keySet()) {
        long done = outcomes.stream().filter(o -> o.view.equals(v) && "DONE".equals(o.status))
            .count();
        assertTrue(done >= 1, "one of the refreshes of " + v + " committed: " + outcomes);
        assertEquals(before.get(v) + done, w.version(v), "one version per DONE refresh of " + v);
      }
      all.forEach((name, kind) -> w.assertConverged(kind, name));
    }
  }

  private static List<Outcome> run(MaterializedViews views, World w, List<String> jobs)
      throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(jobs.size());
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<RefreshResult>> runs = new ArrayList<>();
      for (String v : jobs) {
        runs.add(pool.submit(() -> {
          go.await();
          return views.refresh(List.of(w.ns, v), RefreshOptions.DEFAULTS);
        }));
      }
      go.countDown();
      List<Outcome> out = new ArrayList<>();
      for (int i = 0; i < jobs.size(); i++) {
        try {
          out.add(new Outcome(jobs.get(i), runs.get(i).get(300, TimeUnit.SECONDS).status()
              .name(), null));
        } catch (ExecutionException e) {
          out.add(new Outcome(jobs.get(i), null, ViewRefreshFaultsTest.chain(e.getCause())));
        } catch (java.util.concurrent.TimeoutException e) {
          throw new AssertionError("refresh of " + jobs.get(i) + " hung", e);
        }
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }
}
