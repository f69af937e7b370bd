package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.commit.ViewCommitConflictException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Which views auto refresh watches, and whose failures it keeps: a view that stopped being one
 * is let go, failures outlive neither the view nor its name's next creation, and passing
 * failures do not lengthen the wait. No Spark: the upstream is a catalog in memory (its tables
 * and what reading each view says), the clock the test's.
 */
class AutoRefreshWatchTest {
  private static final List<String> V = List.of("a", "v");
  private static final List<String> SRC = List.of("a", "src");
  private static final long HOUR = Duration.ofHours(1).toMillis();

  /** The upstream: listings and kinds (discovery), and what a poll reads of a view. */
  static final class InMemory extends ViewDiscoveryTest.Catalog implements AutoRefresh.Sources {
    final Map<List<String>, RuntimeException> unreadable = new HashMap<>();

    @Override
    public ViewDiscovery.Kind kind(List<String> id) {
      RuntimeException e = unreadable.get(id);
      if (e != null) {
        throw e;
      }
      return super.kind(id);
    }

    @Override
    public AutoRefresh.Watched watched(List<String> viewId) {
      RuntimeException e = unreadable.get(viewId);
      if (e != null) {
        throw e;
      }
      boolean auto = tables.get(viewId) == ViewDiscovery.Kind.AUTO_VIEW;
      return new AutoRefresh.Watched(auto, 1L, SRC, "def");
    }

    @Override
    public long latestVersion(List<String> tableId) {
      return 1; // up to date: polls start nothing
    }
  }

  private final InMemory up = new InMemory();
  private final AtomicLong clock = new AtomicLong(Duration.ofDays(1).toMillis());
  private final ServerConfig.Auto cfg = ServerConfig.parse(new String[] {"--upstream",
      "http://up"}).auto();

  private AutoRefresh auto(RefreshQueue queue) {
    return new AutoRefresh(up, new ViewDiscovery(up, cfg.rescan().toMillis()),
        new RefreshBackoff(cfg.backoff(), cfg.backoffMax()), queue, cfg, clock::get);
  }

  private static RefreshQueue idleQueue() {
    return new RefreshQueue(1, 1, (view, options, by) -> { });
  }

  @Test
  void aWatchedViewTheRescanFindsUnreadableIsLetGoButNotOneTheUpstreamDidNotDescribe() {
    up.tables.put(V, ViewDiscovery.Kind.AUTO_VIEW);
    up.tables.put(List.of("a", "w"), ViewDiscovery.Kind.AUTO_VIEW);
    try (RefreshQueue q = idleQueue(); AutoRefresh a = auto(q)) {
      a.poll();
      assertTrue(a.status(V).watched());
      assertTrue(a.status(List.of("a", "w")).watched());

      // v's data no longer opens: every poll fails to read it, and only the rescan can tell
      up.unreadable.put(V, new IllegalStateException("LanceError(IO): not a dataset"));
      // w is not described this once: the upstream is busy
      up.unreadable.put(List.of("a", "w"), new IllegalStateException("describe failed",
          ViewDiscoveryTest.unavailable()));
      clock.addAndGet(Duration.ofMinutes(2).toMillis());
      a.poll();
      assertTrue(a.status(V).watched(), "a listing that is no rescan decides nothing");
      clock.addAndGet(HOUR);
      a.poll();
      assertFalse(a.status(V).watched(), "the rescan found v unreadable: let go");
      assertTrue(a.status(List.of("a", "w")).watched(), "w was not described: kept");
    }
  }

  @Test
  void aFailureIsRecordedOnlyWhileTheViewIsWatchedAndACreateStartsAfresh() {
    up.tables.put(V, ViewDiscovery.Kind.AUTO_VIEW);
    try (RefreshQueue q = idleQueue(); AutoRefresh a = auto(q)) {
      a.poll();
      long now = clock.get();
      a.failed(V, now, new IllegalStateException("cannot chunk BOOM"));
      a.failed(V, now, new IllegalStateException("cannot chunk BOOM"));
      assertEquals(2, a.status(V).failing().orElseThrow().failures());

      // the view is created again through the service under the same name
      a.created(V, true);
      assertTrue(a.status(V).watched());
      assertEquals(Optional.empty(), a.status(V).failing(), "the new view has no failures");

      // created without auto refresh: not watched, and a late failure of the old one is dropped
      a.failed(V, now, new IllegalStateException("late"));
      a.created(V, false);
      a.failed(V, now, new IllegalStateException("later"));
      assertFalse(a.status(V).watched());
      assertEquals(Optional.empty(), a.status(V).failing(),
          "a failure of a view no longer watched is not kept");
      a.failed(List.of("a", "never"), now, new IllegalStateException("x"));
      assertEquals(Optional.empty(), a.status(List.of("a", "never")).failing());
    }
  }

  @Test
  void passingFailuresAreCountedApartAndDoNotLengthenTheWait() {
    up.tables.put(V, ViewDiscovery.Kind.AUTO_VIEW);
    try (RefreshQueue q = idleQueue(); AutoRefresh a = auto(q)) {
      a.poll();
      long now = clock.get();
      long first = cfg.backoff().toMillis();
      for (int i = 0; i < 5; i++) {
        a.failed(V, now, new MaterializedViewException("Refresh of view a.v gave up after 3 "
            + "attempts", new ViewCommitConflictException("version 7 exists", null)));
      }
      RefreshBackoff.State st = a.status(V).failing().orElseThrow();
      assertEquals(0, st.failures(), "conflicts say nothing of the view");
      assertEquals(5, st.passingFailures());
      assertEquals(now + first, st.nextAttemptAt(), "tried again after the first wait");

      a.failed(V, now, new IllegalStateException("cannot chunk BOOM"));
      a.failed(V, now, new IllegalStateException("cannot chunk BOOM"));
      st = a.status(V).failing().orElseThrow();
      assertEquals(2, st.failures());
      assertEquals(now + 2 * first, st.nextAttemptAt());
      a.succeeded(V);
      assertEquals(Optional.empty(), a.status(V).failing());
    }
  }
}
