package io.lancerest.spark.mv.refresh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.LogCapture;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.engine.EngineFixture;
import io.lancerest.spark.mv.result.JobRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A refresh attempt opens two tables, the view and its source, one after the other. Another
 * driver's refresh that commits a newer watermark between the two opens must neither be taken
 * for a replaced source nor make the view go back to an older source version: the source's
 * latest version is never older than a watermark this attempt can see, and the view commit,
 * made on the view version the attempt read, conflicts with the other refresh's commit.
 *
 * <p>The other refresh is made to land at that moment without a hook in the engine: each open
 * of a Lance table is logged (DEBUG) just before it happens ({@link LanceLocation#open}), and
 * {@link BeforeSecondOpen} runs the other driver when the attempt's thread logs the open of the
 * second of the two tables, waiting until it has committed.
 */
public class ConcurrentWatermarkTest {
  static EngineFixture f;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of());
  }

  @AfterAll
  static void stop() {
    if (f != null) {
      f.close();
    }
  }

  /** A source with two versions past the view's watermark and a query view over it. */
  private record Setup(String ns, String src, String v, CatalogBinding cat, ViewTables tables) {
    List<String> viewId() {
      return List.of(ns, "v");
    }

    long watermark() {
      return f.views().describe(viewId()).state().watermark();
    }

    long viewVersion() {
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset ds = tables.view().open(a, null)) {
        return ds.version();
      }
    }

    long sourceLatest() {
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset ds = tables.source().open(a, null)) {
        return ds.version();
      }
    }

    /** What another driver does: a change of the source, and a refresh of the view to it. */
    void otherDriver() {
      f.sql("INSERT INTO " + src + " VALUES (4, 'd')");
      f.views().refresh(viewId(), RefreshOptions.DEFAULTS);
    }
  }

  private static Setup setup(String prefix) {
    String ns = f.namespace(prefix);
    String src = "lance." + ns + ".src";
    String v = "lance." + ns + ".v";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING)");
    f.sql("INSERT INTO " + src + " VALUES (1, 'a'), (2, 'b')");
    f.sql("CREATE MATERIALIZED VIEW " + v + " AS SELECT id, upper(name) AS n FROM " + src);
    f.sql("INSERT INTO " + src + " VALUES (3, 'c')");
    CatalogBinding cat = CatalogBinding.of(f.spark, EngineFixture.CATALOG);
    TableLocation view = cat.locate(List.of(ns, "v"), "view");
    TableLocation source = cat.locate(List.of(ns, "src"), "source table");
    return new Setup(ns, src, v, cat, new ViewTables(v, view.dataset(), source.dataset(), null,
        view.properties()));
  }

  @Test
  void theDecisionOfAnAttemptIsNoReplacedSourceWhenAnotherRefreshCommitsBetweenItsOpens() {
    Setup s = setup("race_rules");
    long before = s.watermark();
    RefreshContext ctx = new RefreshContext(f.spark, s.v(), "race-rules", null, null);
    TargetRules.Decided d;
    long committedMeanwhile;
    try (AttemptDatasets open = new AttemptDatasets(s.v(), s.tables());
        BeforeSecondOpen race = new BeforeSecondOpen(Thread.currentThread(), s.tables(), null,
            s::otherDriver)) {
      d = TargetRules.decide(ctx, s.tables(), open, null, false);
      race.assertRan();
      assertEquals(List.of(s.tables().viewUri(), s.tables().sourceUri()), race.opens(),
          "the attempt opens the view, then the source");
      assertEquals(1, race.triggeredAt(), "the other driver ran right before the source's open");
      committedMeanwhile = s.watermark();
      assertTrue(committedMeanwhile > before, "the other driver refreshed the view to the newer "
          + "source version (" + before + " -> " + committedMeanwhile + ")");
      RefreshTarget t = d.target();
      assertFalse(t.sourceReplaced(), "the same source was taken for a replaced one: " + d.note()
          + " (opens of the attempt's thread: " + race.opens() + ")");
      assertNull(d.note(), "no rebuild, no note");
      assertNull(t.rebuild(), "the view is not rebuilt");
      assertNull(t.watermarkRemoved(), "the watermark version is there");
      assertTrue(t.srcVersion() >= committedMeanwhile, "the attempt refreshes to source version "
          + t.srcVersion() + ", older than the watermark " + committedMeanwhile + " another "
          + "refresh has committed: the view would go back");
      assertTrue(t.srcVersion() >= t.watermark(), "never backwards: " + t);
    }
  }

  @Test
  void aRefreshMeetingAnotherOneBetweenItsOpensEndsAtTheNewestVersion() {
    Setup s = setup("race_refresh");
    TableLocation log = s.cat().locate(List.of("__system", "mv_jobs"), "job log");
    long before = s.watermark();
    List<Long> seen = new ArrayList<>();
    org.apache.spark.sql.Row r;
    List<String> opens;
    int triggeredAt;
    String driverLog;
    try (LogCapture driver = new LogCapture(RefreshDriver.class.getName());
        BeforeSecondOpen race = new BeforeSecondOpen(Thread.currentThread(), s.tables(),
            log.location(), () -> {
              s.otherDriver();
              seen.add(s.watermark());
              seen.add(s.viewVersion());
            })) {
      r = f.sql("REFRESH MATERIALIZED VIEW " + s.v()).get(0);
      race.assertRan();
      opens = race.opens();
      triggeredAt = race.triggeredAt();
      driverLog = driver.text();
    }
    // The race this test is about, not another one an extra open would move it to: the
    // refresh's thread records its job (the log's opens), then its first attempt opens the
    // view and then the source, and the other driver ran right before that source open.
    String view = s.tables().viewUri();
    String source = s.tables().sourceUri();
    List<String> upToTrigger = opens.subList(0, triggeredAt + 1);
    int lastLogOpen = upToTrigger.lastIndexOf(log.location());
    assertTrue(lastLogOpen >= 0, "the job log was opened before the attempt: " + opens);
    assertEquals(List.of(view, source), upToTrigger.subList(lastLogOpen + 1, triggeredAt + 1),
        "after recording its job, the attempt opened the view, then the source, and the other "
        + "driver ran right before the source's open; every open of the thread: " + opens);
    // ... and its commit, on the view version read before the other driver's, conflicted
    String jobId = r.getString(0);
    java.util.regex.Matcher retried = java.util.regex.Pattern.compile("View "
        + java.util.regex.Pattern.quote(s.v() + " (job " + jobId + "): ")
        + "[^\\n]*; computing the refresh again \\(attempt 2 of 3\\)").matcher(driverLog);
    assertTrue(retried.find(), "the refresh's first commit conflicted and it computed the "
        + "refresh again; the driver's log: " + driverLog);
    long meanwhile = seen.get(0);
    // Its first attempt read the view before the other commit: its commit conflicted, and the
    // second attempt found the view at the latest version already.
    assertEquals("SKIPPED", r.getString(1), "the refresh: " + r);
    assertEquals(seen.get(1), s.viewVersion(), "nothing committed on top of the other "
        + "driver's refresh");
    assertTrue(meanwhile > before, "the other driver refreshed the view (" + before + " -> "
        + meanwhile + ")");
    long latest = s.sourceLatest();
    assertEquals(latest, meanwhile, "the other driver's refresh went to the latest version");
    assertEquals(latest, s.watermark(), "the view reflects the newest source version; it did "
        + "not go back to the one the refresh read first (job: " + r + ")");
    for (JobRecord j : f.views().jobs(s.viewId(), 10)) {
      String m = j.message() == null ? "" : j.message();
      assertFalse(m.contains("replaced"), "job " + j.jobId() + " took the source for a "
          + "replaced one: " + m);
    }
    assertEquals(f.rows("SELECT id, upper(name) AS n FROM " + s.src()),
        f.rows("SELECT id, n FROM " + s.v()), "the view equals its SELECT");
    assertEquals(f.rows("SELECT id FROM " + s.src()).size(),
        f.rows("SELECT DISTINCT __source_row_id FROM " + s.v()).size(), "no source row twice");
  }

  /**
   * Runs another driver's work when a thread is about to open the second of a view and its
   * source: the first open of one of the two (after {@code afterUri}'s, when given) is let
   * through, and before the first open of the other the work runs on its own thread, the
   * opening thread waiting until it has ended (bounded). Fires once.
   */
  static final class BeforeSecondOpen extends AbstractAppender implements AutoCloseable {
    private static final String LOGGER = LanceLocation.class.getName();
    private static final long WAIT_SECONDS = 240;
    private final Thread thread;
    private final String viewUri;
    private final String sourceUri;
    private final Runnable otherDriver;
    private final LoggerContext context = (LoggerContext) LogManager.getContext(false);
    private final LoggerConfig replaced;
    private final ExecutorService other = Executors.newSingleThreadExecutor();
    private final List<String> opens = new ArrayList<>();
    private String after;
    private String first;
    private boolean ran;
    private int triggeredAt = -1;
    private Throwable failure;

    BeforeSecondOpen(Thread thread, ViewTables tables, String afterUri, Runnable otherDriver) {
      super("before-second-open-" + System.nanoTime(), null, null, true, Property.EMPTY_ARRAY);
      this.thread = thread;
      this.viewUri = tables.viewUri();
      this.sourceUri = tables.sourceUri();
      this.after = afterUri;
      this.otherDriver = otherDriver;
      start();
      Configuration config = context.getConfiguration();
      replaced = config.getLoggers().get(LOGGER);
      if (replaced != null) {
        config.removeLogger(LOGGER);
      }
      LoggerConfig logger = new LoggerConfig(LOGGER, Level.DEBUG, false);
      logger.addAppender(this, Level.DEBUG, null);
      config.addLogger(LOGGER, logger);
      context.updateLoggers();
    }

    @Override
    public void append(LogEvent event) {
      Object[] p = event.getMessage().getParameters();
      if (Thread.currentThread() != thread || p == null || p.length == 0) {
        return;
      }
      String uri = String.valueOf(p[0]);
      synchronized (this) {
        opens.add(uri);
        if (ran) {
          return;
        }
        if (after != null) {
          if (uri.equals(after)) {
            after = null;
          }
          return;
        }
        if (!uri.equals(viewUri) && !uri.equals(sourceUri)) {
          return;
        }
        if (first == null || first.equals(uri)) {
          first = uri;
          return;
        }
        ran = true;
        triggeredAt = opens.size() - 1;
      }
      Future<?> done = other.submit(() -> {
        org.apache.spark.sql.SparkSession.setActiveSession(f.spark);
        otherDriver.run();
      });
      try {
        done.get(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        failure = new AssertionError("the other driver did not finish within " + WAIT_SECONDS
            + " s", e);
      } catch (Exception e) {
        failure = e;
      }
    }

    /** Every open of the thread, in order, the ones before and after the other driver's. */
    synchronized List<String> opens() {
      return List.copyOf(opens);
    }

    /** Where in {@link #opens} the open is that the other driver ran before; -1: never. */
    synchronized int triggeredAt() {
      return triggeredAt;
    }

    void assertRan() {
      synchronized (this) {
        assertTrue(ran, "the other driver never ran: the thread never opened both the view "
            + viewUri + " and the source " + sourceUri + " (after the job log); its opens: "
            + opens);
      }
      if (failure != null) {
        throw new AssertionError("the other driver failed: " + failure, failure);
      }
    }

    @Override
    public void close() {
      Configuration config = context.getConfiguration();
      config.removeLogger(LOGGER);
      if (replaced != null) {
        config.addLogger(LOGGER, replaced);
      }
      context.updateLoggers();
      stop();
      other.shutdownNow();
    }
  }
}
