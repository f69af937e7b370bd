package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.MaterializedViews;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.lance.namespace.RestAdapter;

/**
 * A watched view dropped and replaced by a plain table of the same name: auto refresh, reading
 * the directory server as the service does (its catalog and engine), lets it go at the next
 * poll, and neither watches it again nor fails on it at later polls and listings. The status
 * route shows what {@link AutoRefresh#status} says.
 */
class AutoRefreshReplacedViewTest {
  /** Past the listing interval of the default 10 s poll (100 s). */
  private static final long LISTING_DUE = Duration.ofMinutes(2).toMillis();

  @Test
  void aViewReplacedByAPlainTableIsNoLongerWatched() throws Exception {
    RestAdapter dir = MaterializedViewServerTest.dirServer("auto-refresh-replaced");
    String uri = "http://127.0.0.1:" + dir.getPort();
    List<String> v = List.of("r", "v");
    try (LogCapture log = new LogCapture()) {
      SparkSession user = MaterializedViewServerTest.lanceSession(uri, null);
      user.sql("CREATE NAMESPACE lance.r").collect();
      user.sql("CREATE TABLE lance.r.src (id BIGINT, doc STRING)").collect();
      user.sql("INSERT INTO lance.r.src VALUES (1, 'x')").collect();
      user.sql("CREATE MATERIALIZED VIEW lance.r.v OPTIONS (auto_refresh = true) AS "
          + "SELECT id FROM lance.r.src").collect();

      SparkSession svc = MaterializedViewServerTest.session("svc", uri, null);
      svc.conf().set("spark.sql.catalog.svc.mv.mode", "client");
      CatalogSources sources = new CatalogSources(svc, "svc",
          MaterializedViews.forCatalog(svc, "svc"));
      ServerConfig.Auto cfg = ServerConfig.parse(new String[] {"--upstream", uri}).auto();
      AtomicLong clock = new AtomicLong(Duration.ofDays(1).toMillis());
      try (RefreshQueue queue = new RefreshQueue(1, 1, (view, options, by) -> { });
          AutoRefresh auto = new AutoRefresh(sources, new ViewDiscovery(sources,
              cfg.rescan().toMillis()), new RefreshBackoff(cfg.backoff(), cfg.backoffMax()),
              queue, cfg, clock::get)) {
        assertEquals(List.of(), auto.poll(), "the view is up to date");
        assertTrue(auto.status(v).watched(), "found by discovery");
        auto.failed(v, clock.get(), new IllegalStateException("cannot chunk BOOM"));

        SparkSession.setActiveSession(user);
        user.sql("DROP MATERIALIZED VIEW lance.r.v").collect();
        user.sql("CREATE TABLE lance.r.v (id BIGINT)").collect();
        user.sql("INSERT INTO lance.r.src VALUES (2, 'y')").collect(); // the old source moves on

        log.lines.clear();
        assertEquals(List.of(), auto.poll(), "nothing to refresh: v is a table now");
        assertFalse(auto.status(v).watched(), "the plain table is still watched");
        assertEquals(java.util.Optional.empty(), auto.status(v).failing(),
            "the view's failures outlived it");
        assertEquals("{\"watched\":false,\"state\":\"off\"}",
            JobJson.autoRefresh(auto.status(v)).toString(), "what the status route says");

        // later polls, a listing and the hourly rescan leave it alone
        for (long step : new long[] {0, LISTING_DUE, cfg.rescan().toMillis()}) {
          clock.addAndGet(step);
          assertEquals(List.of(), auto.poll());
          assertFalse(auto.status(v).watched(), "watched again after " + step + " ms");
        }
        assertTrue(log.lines.stream().anyMatch(l -> l.equals("Auto refresh: r.v is not a view "
            + "asking for auto refresh any more; no longer watched")), log.lines.toString());
        assertTrue(log.lines.stream().noneMatch(l -> l.contains("skipped this poll")),
            "a poll failed on the table: " + log.lines);
      }
    } finally {
      dir.close();
    }
  }
}
