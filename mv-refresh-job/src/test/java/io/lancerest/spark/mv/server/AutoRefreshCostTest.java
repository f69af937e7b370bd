package io.lancerest.spark.mv.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.faults.FaultProxy;
import io.lancerest.spark.mv.MaterializedViews;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.lance.namespace.RestAdapter;

/**
 * What auto refresh asks of the upstream while nothing changes: the directory server behind a
 * proxy that counts requests by route, auto refresh reading through it as the service does, on
 * a clock the test moves. A poll that lists the namespaces again costs the same with 20 plain
 * tables as with 200, and reads none of them.
 */
class AutoRefreshCostTest {
  /** Past the listing interval of the default 10 s poll (100 s), short of the rescan (1 h). */
  private static final long LISTING_DUE = Duration.ofMinutes(2).toMillis();
  private static final Schema ONE_COLUMN = new Schema(List.of(
      Field.nullable("x", new ArrowType.Int(64, true))));

  @Test
  void anIdlePollDoesNotGrowWithThePlainTablesAndReadsNoneOfThem() throws Exception {
    RestAdapter dir = MaterializedViewServerTest.dirServer("auto-refresh-cost");
    String direct = "http://127.0.0.1:" + dir.getPort();
    try (FaultProxy proxy = FaultProxy.start(direct)) {
      SparkSession user = MaterializedViewServerTest.lanceSession(direct, null);
      user.sql("CREATE NAMESPACE lance.a").collect();
      user.sql("CREATE NAMESPACE lance.b").collect();
      user.sql("CREATE TABLE lance.a.src (id BIGINT, doc STRING)").collect();
      user.sql("INSERT INTO lance.a.src VALUES (1, 'x'), (2, 'y')").collect();
      for (String v : List.of("v1", "v2")) {
        user.sql("CREATE MATERIALIZED VIEW lance.a." + v + " OPTIONS (auto_refresh = true) AS "
            + "SELECT id FROM lance.a.src").collect();
      }
      user.sql("CREATE MATERIALIZED VIEW lance.a.p AS SELECT id FROM lance.a.src").collect();

      // auto refresh as the service wires it, its catalog in front of the counting proxy
      SparkSession svc = MaterializedViewServerTest.session("svc", proxy.uri(), null);
      svc.conf().set("spark.sql.catalog.svc.mv.mode", "client");
      CatalogSources sources = new CatalogSources(svc, "svc",
          MaterializedViews.forCatalog(svc, "svc"));
      ServerConfig.Auto cfg = ServerConfig.parse(new String[] {"--upstream", direct}).auto();
      AtomicLong clock = new AtomicLong(Duration.ofDays(1).toMillis());
      try (LanceRestClient client = LanceRestClient.create(Map.of("uri", direct));
          RefreshQueue queue = new RefreshQueue(1, 1, (view, options, by) -> { });
          AutoRefresh auto = new AutoRefresh(sources, new ViewDiscovery(sources,
              cfg.rescan().toMillis()), new RefreshBackoff(cfg.backoff(), cfg.backoffMax()),
              queue, cfg, clock::get)) {
        plainTables(client, 0, 20);
        assertEquals(List.of(), auto.poll(), "the views are up to date");
        Map<String, Integer> idle20 = idlePoll(auto, clock, proxy);

        plainTables(client, 20, 200);
        proxy.reset();
        clock.addAndGet(LISTING_DUE);
        auto.poll();
        assertEquals(180 + 4, proxy.upstream("table/describe"), "the 180 new tables are read "
            + "once, and each auto-refresh view and its source: " + proxy.upstreamCounts());
        Map<String, Integer> idle200 = idlePoll(auto, clock, proxy);

        assertEquals(idle20, idle200, "an idle poll over 200 plain tables costs what it does "
            + "over 20");
        assertEquals(4, idle200.get("table/describe"), "an idle poll reads each auto-refresh "
            + "view and its source, no plain table: " + idle200);
        assertEquals(3, idle200.get("namespace/table/list"), "a, b and __system: " + idle200);
      }
    } finally {
      dir.close();
    }
  }

  /** The requests of a poll that lists the namespaces again, nothing having changed. */
  private static Map<String, Integer> idlePoll(AutoRefresh auto, AtomicLong clock,
      FaultProxy proxy) {
    clock.addAndGet(LISTING_DUE);
    proxy.reset();
    assertEquals(List.of(), auto.poll(), "nothing changed, nothing to refresh");
    Map<String, Integer> calls = proxy.upstreamCounts();
    assertTrue(calls.getOrDefault("namespace/list", 0) > 0, "the poll listed: " + calls);
    return calls;
  }

  /** Plain tables {@code b.t<from>} to {@code b.t<to - 1>}, one row each. */
  private static void plainTables(LanceRestClient client, int from, int to) {
    try (RootAllocator a = new RootAllocator();
        VectorSchemaRoot rows = VectorSchemaRoot.create(ONE_COLUMN, a)) {
      ((BigIntVector) rows.getVector("x")).setSafe(0, 1L);
      rows.setRowCount(1);
      for (int i = from; i < to; i++) {
        client.createTable(new CreateTableRequest().id(List.of("b", "t" + i)), rows);
      }
    }
  }
}
