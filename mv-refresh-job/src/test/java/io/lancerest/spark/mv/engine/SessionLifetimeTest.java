package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancerest.client.testing.RestServerFixture;
import io.lancerest.faults.FaultProxy;
import io.lancerest.faults.OAuthEndpoint;
import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.TestSpark;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.WeakReference;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Many short sessions on one catalog configuration, as a Spark Connect or Thrift server opens
 * one per client: each runs a few statements (a listing, a read of a table whose vended
 * credentials expire, so executors would renew them through the driver's credential relay, and
 * a materialized-view refresh, which uses the job service) against a server that requires an
 * OAuth2 token, and is dropped. What the catalog instances share per SparkContext (REST client,
 * token refresher, relay, job-service threads) exists once; what each instance holds goes with
 * its session; everything shared ends with the context.
 *
 * <p>Runs in a JVM of its own (the {@code own-jvm} execution): it counts the JVM's threads and
 * stops the SparkContext at the end. Slow: its fifty sessions take about two minutes.
 */
@Tag("slow")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SessionLifetimeTest {
  static final String CLIENT_SECRET = "sessions-SECRET-cs";
  static final int SESSIONS = 50;
  /** Threads the JVM may have more after {@link #SESSIONS} sessions than after the first. */
  static final int THREAD_SLACK = 12;
  /** Sockets likewise (pooled connections to the server, the proxy's side of them). */
  static final int SOCKET_SLACK = 8;
  /**
   * Sessions Spark itself may keep for a while: a thread Spark starts while a session is active
   * (its broadcast and subquery pools, OkHttp's task runner) inherits the session.
   */
  static final int PINNED_SLACK = 4;
  static final Duration GC_WAIT = Duration.ofSeconds(90);
  /** Names of the threads the catalog and the view engine start. */
  static final List<String> OURS = List.of("lancerest-", "lance-rest-");

  static RestServerFixture server;
  static FaultProxy proxy;
  static OAuthEndpoint oauth;
  static SparkSession base;

  @BeforeAll
  static void start() {
    server = RestServerFixture.start();
    proxy = FaultProxy.start(server.uri());
    oauth = proxy.requireOAuth("sessions", CLIENT_SECRET, Duration.ofHours(1));
    // Vended credentials that expire, as an object-store server hands out: behind a server
    // that requires a token, executors renew them through the driver's credential relay.
    proxy.on("POST", "table/describe").always().rewrite(node -> {
      node.putObject("storage_options").put("expires_at_millis",
          Long.toString(System.currentTimeMillis() + 3_600_000));
      return node;
    });
    base = TestSpark.newSession();
    configure(base, Map.of());
    sql(base, "CREATE NAMESPACE lance.sessions");
    sql(base, "CREATE TABLE lance.sessions.src (id BIGINT, grp STRING)");
    sql(base, "INSERT INTO lance.sessions.src SELECT id, concat('g', id % 3) FROM range(0, 30)");
    sql(base, "CREATE MATERIALIZED VIEW lance.sessions.v AS SELECT grp, id FROM "
        + "lance.sessions.src WHERE id % 2 = 0");
  }

  @AfterAll
  static void stop() {
    if (base != null && !base.sparkContext().isStopped()) {
      base.sparkContext().stop();
    }
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.close();
    }
  }

  static void configure(SparkSession s, Map<String, String> extra) {
    String p = "spark.sql.catalog.lance";
    s.conf().set(p, LanceRestCatalog.class.getName());
    s.conf().set(p + ".uri", proxy.uri());
    s.conf().set(p + ".oauth2.client-id", "sessions");
    s.conf().set(p + ".oauth2.client-secret", CLIENT_SECRET);
    s.conf().set(p + ".oauth2.token-uri", proxy.uri() + "/oauth/token");
    extra.forEach((k, v) -> s.conf().set(p + "." + k, v));
    s.conf().set(MaterializedViews.FACTORY_CONF, DefaultMaterializedViewsFactory.class.getName());
  }

  static List<org.apache.spark.sql.Row> sql(SparkSession s, String statement) {
    try {
      return s.sql(statement).collectAsList();
    } finally {
      SparkSession.clearActiveSession();
    }
  }

  /** One short session: three statements, then it is dropped; returns its catalog, weakly. */
  static WeakReference<Object> shortSession(Map<String, String> extra) {
    SparkSession s = base.newSession();
    configure(s, extra);
    sql(s, "SHOW TABLES IN lance.sessions");
    assertEquals(30L, sql(s, "SELECT count(*) FROM lance.sessions.src WHERE id >= 0").get(0)
        .getLong(0));
    sql(s, "REFRESH MATERIALIZED VIEW lance.sessions.v");
    return new WeakReference<>(catalog(s));
  }

  static LanceRestCatalog catalog(SparkSession s) {
    return (LanceRestCatalog) s.sessionState().catalogManager().catalog("lance");
  }

  /** The JVM's live threads, by name with the numbers left out, and its open sockets. */
  record Census(int threads, Map<String, Integer> byName, long sockets) {
    int named(String prefix) {
      return byName.entrySet().stream().filter(e -> e.getKey().startsWith(prefix))
          .mapToInt(Map.Entry::getValue).sum();
    }

    int ours() {
      return OURS.stream().mapToInt(this::named).sum();
    }

    @Override
    public String toString() {
      return threads + " threads, " + sockets + " sockets; threads by name " + byName;
    }
  }

  static Census census() {
    Map<String, Integer> byName = new TreeMap<>();
    int n = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive()) {
        n++;
        byName.merge(t.getName().replaceAll("\\d+", "#"), 1, Integer::sum);
      }
    }
    return new Census(n, byName, sockets());
  }

  /** Socket descriptors of this process ({@code /proc/self/fd}). */
  static long sockets() {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(fd -> {
        try {
          return Files.readSymbolicLink(fd).toString().startsWith("socket:");
        } catch (IOException e) {
          return false; // closed while listed
        }
      }).count();
    } catch (IOException e) {
      throw new UncheckedIOException("this test counts sockets in /proc/self/fd (Linux)", e);
    }
  }

  /**
   * Runs {@code System.gc()} every 200 ms until {@code done} holds, for at most {@link #GC_WAIT};
   * fails naming {@code what} it waited for and {@code state} then.
   */
  static void awaitAfterGc(String what, BooleanSupplier done, Supplier<Object> state)
      throws InterruptedException {
    long end = System.nanoTime() + GC_WAIT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("Waited " + GC_WAIT.toSeconds() + " s, collecting garbage every 200 ms, for "
            + what + "; it did not happen: " + state.get());
      }
      System.gc();
      Thread.sleep(200);
    }
  }

  static long alive(List<WeakReference<Object>> refs) {
    return refs.stream().filter(r -> r.get() != null).count();
  }

  @Test
  @Order(1)
  void manySessionsLeaveAtMostAFewThreadsAndSocketsBehind() throws Exception {
    shortSession(Map.of());
    // What the first session started and lets go of on its own (idle pooled connections, Spark's
    // idle task threads) is gone before it is counted.
    Thread.sleep(5_000);
    System.gc();
    Census first = census();
    List<WeakReference<Object>> catalogs = new ArrayList<>();
    for (int i = 1; i < SESSIONS; i++) {
      catalogs.add(shortSession(Map.of()));
    }
    awaitAfterGc("the JVM's threads to come back to at most " + THREAD_SLACK + " more than the "
        + first.threads() + " after the first session", () -> census().threads()
            <= first.threads() + THREAD_SLACK,
        () -> "after the first session " + first + "; now " + census());
    awaitAfterGc("the catalogs of " + (SESSIONS - 1) + " dropped sessions to be collected (all "
        + "but " + PINNED_SLACK + ")", () -> alive(catalogs) <= PINNED_SLACK,
        () -> alive(catalogs) + " still reachable");
    Census after = census();
    String both = "after the first session " + first + "; after " + SESSIONS + ": " + after;
    assertEquals(first.ours(), after.ours(), "the catalog's and the engine's threads: " + both);
    assertTrue(after.named("lancerest-credential-relay-") >= 1, "the relay ran: " + both);
    assertTrue(after.named("lancerest-mv-jobs-") >= 1, "the job service ran: " + both);
    assertTrue(after.named("lance-rest-oauth") == 1, "one token refresher: " + both);
    assertEquals(1, oauth.issued(), "the sessions of one configuration share one token");
    assertTrue(after.sockets() <= first.sockets() + SOCKET_SLACK, both);
  }

  @Test
  @Order(2)
  void twoConcurrentSessionsWithAFixedRelayPortBothWork() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Map<String, String> fixed = Map.of("credential-relay.port", Integer.toString(port),
        "credential-relay.host", "127.0.0.1");
    SparkSession a = base.newSession();
    SparkSession b = base.newSession();
    configure(a, fixed);
    configure(b, fixed);
    CountDownLatch go = new CountDownLatch(1);
    List<CompletableFuture<Long>> reads = new ArrayList<>();
    for (SparkSession s : List.of(a, b)) {
      reads.add(CompletableFuture.supplyAsync(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        return sql(s, "SELECT count(*) FROM lance.sessions.src WHERE id >= 0").get(0).getLong(0);
      }));
    }
    go.countDown();
    for (CompletableFuture<Long> r : reads) {
      assertEquals(30L, r.get(120, TimeUnit.SECONDS), "both sessions read the table");
    }
    // Executors of both sessions renew through one relay, on the fixed port.
    String relay = "http://127.0.0.1:" + port;
    Map<String, String> vended = Map.of("expires_at_millis",
        Long.toString(System.currentTimeMillis() + 3_600_000));
    for (SparkSession s : List.of(a, b)) {
      Map<String, String> opts = catalog(s).engineStorageOptions(List.of("sessions", "src"),
          vended);
      assertTrue(opts.values().contains(relay), "routed through " + relay + ": " + opts.keySet());
    }

    // Closing one session's catalog leaves the other's working; the closed one says so.
    catalog(a).close();
    assertEquals(30L, sql(b, "SELECT count(*) FROM lance.sessions.src WHERE id >= 0").get(0)
        .getLong(0));
    IllegalStateException closed = assertThrows(IllegalStateException.class,
        () -> sql(a, "SHOW TABLES IN lance.sessions"));
    assertTrue(closed.getMessage().startsWith("The Lance REST client of " + proxy.uri()
        + " is closed"), closed.getMessage());
  }

  @Test
  @Order(3)
  void stoppingTheContextEndsEveryThreadTheCatalogsShared() throws Exception {
    WeakReference<Object> live = shortSession(Map.of());
    assertTrue(census().ours() > 0, "the catalog's threads run: " + census());

    base.sparkContext().stop();

    awaitAfterGc("every thread of the catalog and the engine to end after the SparkContext "
        + "stopped", () -> census().ours() == 0, () -> census());
    LanceRestCatalog still = (LanceRestCatalog) live.get();
    if (still != null) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> still.listNamespaces());
      assertTrue(e.getMessage().contains(" is closed"), e.getMessage());
    }
    assertFalse(census().byName().containsKey("lancerest-catalog-reaper"), census().toString());
  }
}
