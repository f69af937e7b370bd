package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.testing.RestServerFixture;
import io.lancerest.faults.FaultProxy;
import io.lancerest.faults.OAuthEndpoint;
import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.catalog.shared.ContextResources;
import io.lancerest.spark.catalog.shared.ResourceShares;
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
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * Short sessions, as a Spark Connect or Thrift server opens one per client: each runs a few
 * statements (a listing, a read of a table whose vended credentials expire, so executors would
 * renew them through the driver's credential relay, and a materialized-view refresh, which uses
 * the job service) against a server that requires an OAuth2 token, and is dropped. What the
 * catalog instances of one configuration share per SparkContext (REST client, token refresher,
 * relay, job threads) exists once; a session's hold on it goes with the session, and a
 * configuration no session uses any more is closed, while the context runs; everything shared
 * ends with the context.
 *
 * <p>What it counts is the project's own: its threads (by name), the leases the context's shares
 * hold and the relays' listening sockets, never the JVM's whole thread or socket count, which
 * Spark's own pools move. Runs in a JVM of its own (the {@code own-jvm} execution): it stops the
 * SparkContext at the end.
 */
@Tag("slow")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SessionLifetimeTest {
  static final String CLIENT_SECRET = "sessions-SECRET-cs";
  static final int SESSIONS = 10;
  /** Sessions of a configuration of their own each (a header per user). */
  static final int USERS = 4;
  /**
   * Dropped sessions whose catalog may stay reachable a while: a thread Spark starts while a
   * session is active (its broadcast and subquery pools) inherits the session, as does a thread
   * of OkHttp's JVM-wide task runner; they end when idle.
   */
  static final int PINNED_SLACK = 2;
  static final Duration GC_WAIT = Duration.ofSeconds(30);
  /** The most threads of each name one configuration has (names without their number). */
  static final Map<String, Integer> PER_CONFIGURATION = Map.of(
      "lancerest-credential-relay-lance-#", 4,
      "lance-rest-oauth2-refresh", 1,
      "lancerest-mv-jobs-lance-heartbeat-#", 1,
      "lancerest-mv-jobs-lance-maintenance-#", 1,
      ContextResources.REAPER_THREAD, 1);

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

  /**
   * One short session with the catalog options {@code extra}: three statements, then it is
   * dropped; returns the port of its credential relay.
   */
  static int shortSession(Map<String, String> extra) {
    return relayPort(catalog(session(extra)));
  }

  /** A session with the catalog options {@code extra} that ran the three statements. */
  static SparkSession session(Map<String, String> extra) {
    SparkSession s = base.newSession();
    configure(s, extra);
    sql(s, "SHOW TABLES IN lance.sessions");
    assertEquals(30L, sql(s, "SELECT count(*) FROM lance.sessions.src WHERE id >= 0").get(0)
        .getLong(0));
    sql(s, "REFRESH MATERIALIZED VIEW lance.sessions.v");
    return s;
  }

  static LanceRestCatalog catalog(SparkSession s) {
    return (LanceRestCatalog) s.sessionState().catalogManager().catalog("lance");
  }

  /** The port of the relay executors of {@code c}'s sessions renew credentials through. */
  static int relayPort(LanceRestCatalog c) {
    Map<String, String> opts = c.engineStorageOptions(List.of("sessions", "src"),
        Map.of("expires_at_millis", Long.toString(System.currentTimeMillis() + 3_600_000)));
    for (String v : opts.values()) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("^http://[^/]+:(\\d+)$")
          .matcher(v);
      if (m.matches()) {
        return Integer.parseInt(m.group(1));
      }
    }
    throw new AssertionError("no relay among the executors' options " + opts.keySet());
  }

  static ResourceShares shares() {
    return ContextResources.of(base.sparkContext());
  }

  /** The live threads of the catalog and the view engine, by name without their number. */
  static Map<String, Integer> ours() {
    Map<String, Integer> byName = new TreeMap<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String n = t.getName();
      if (t.isAlive() && (n.startsWith("lancerest-") || n.startsWith("lance-rest-"))) {
        byName.merge(n.replaceAll("-\\d+$", "-#"), 1, Integer::sum);
      }
    }
    return byName;
  }

  static int ours(String name) {
    return ours().getOrDefault(name, 0);
  }

  /** Whether a socket of this machine listens on TCP {@code port} ({@code /proc/net/tcp*}). */
  static boolean listening(int port) {
    String local = String.format(Locale.ROOT, ":%04X ", port);
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      try {
        for (String line : Files.readAllLines(Path.of(table))) {
          String[] f = line.trim().split("\\s+");
          // local_address is the second field, the state (0A: LISTEN) the fourth
          if (f.length > 3 && (f[1] + " ").endsWith(local) && f[3].equals("0A")) {
            return true;
          }
        }
      } catch (IOException e) {
        if (table.endsWith("tcp")) {
          throw new UncheckedIOException("this test reads " + table + " (Linux)", e);
        }
      }
    }
    return false;
  }

  /**
   * Runs {@code System.gc()} every 250 ms until {@code done} holds, for at most {@link #GC_WAIT};
   * fails naming {@code what} it waited for and {@code state} then.
   */
  static void awaitAfterGc(String what, BooleanSupplier done, Supplier<Object> state)
      throws InterruptedException {
    long end = System.nanoTime() + GC_WAIT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("Waited " + GC_WAIT.toSeconds() + " s, collecting garbage every 250 ms, for "
            + what + "; it did not happen: " + state.get());
      }
      System.gc();
      Thread.sleep(250);
    }
  }

  static String state() {
    ResourceShares shares = shares();
    return shares.size() + " configuration(s) open, " + shares.reaper().pending()
        + " lease(s) held; threads " + ours();
  }

  @Test
  @Order(1)
  void sessionsOfOneConfigurationShareOneSetOfThreadsAndOneRelay() throws Exception {
    int relay = shortSession(Map.of());
    for (int i = 1; i < SESSIONS; i++) {
      assertEquals(relay, shortSession(Map.of()), "every session's executors use one relay");
    }
    // The base session holds one lease; the dropped sessions' leases go with their catalogs.
    awaitAfterGc("the leases of " + SESSIONS + " dropped sessions to be released (all but "
        + PINNED_SLACK + ")", () -> shares().reaper().pending() <= 1 + PINNED_SLACK,
        SessionLifetimeTest::state);
    assertEquals(1, shares().size(), "one configuration: " + state());
    Map<String, Integer> ours = ours();
    PER_CONFIGURATION.forEach((name, most) -> assertTrue(ours.getOrDefault(name, 0) <= most,
        "at most " + most + " thread(s) " + name + " for one configuration: " + ours));
    assertTrue(ours.keySet().stream().allMatch(n -> PER_CONFIGURATION.containsKey(n)
        || n.startsWith("lancerest-mv-jobs-lance-async-")), "no other thread of ours: " + ours);
    assertEquals(0, ours.getOrDefault("lancerest-mv-jobs-lance-async-#", 0), "no ASYNC refresh "
        + "ran, so no ASYNC thread: " + ours);
    assertEquals(1, ours.getOrDefault("lance-rest-oauth2-refresh", 0), "one token refresher");
    assertTrue(ours.getOrDefault("lancerest-credential-relay-lance-#", 0) >= 1, "the relay "
        + "served the sessions' reads: " + ours);
    assertEquals(1, ours.getOrDefault("lancerest-mv-jobs-lance-heartbeat-#", 0), ours.toString());
    assertEquals(1, oauth.issued(), "the sessions of one configuration share one token");
    assertTrue(listening(relay), "the relay listens on " + relay);
  }

  /**
   * A server where each user's session gives the catalog options of its own (a header, a
   * token): every configuration has its own client, token refresher, relay and job threads,
   * which close once no session uses them, without the context stopping.
   */
  @Test
  @Order(2)
  void aConfigurationNoSessionUsesAnyMoreIsClosedWhileTheContextRuns() throws Exception {
    int before = shares().size();
    int relayBefore = shortSession(Map.of());
    List<Integer> relays = new ArrayList<>();
    List<SparkSession> users = new ArrayList<>();
    for (int u = 0; u < USERS; u++) {
      users.add(session(Map.of("header.X-User", "user-" + u)));
      relays.add(relayPort(catalog(users.get(u))));
    }
    assertEquals(USERS, relays.stream().distinct().count(), "a relay per user: " + relays);
    assertTrue(relays.stream().allMatch(SessionLifetimeTest::listening), "the users' relays "
        + "listen on " + relays);
    assertEquals(before + USERS, shares().size(), state());
    users.clear(); // the users leave

    awaitAfterGc("the configurations of " + USERS + " dropped users' sessions to be closed: "
        + "their relays on " + relays + " no longer listening, their token refreshers and job "
        + "threads ended", () -> shares().size() == before
            && relays.stream().noneMatch(SessionLifetimeTest::listening)
            && ours("lance-rest-oauth2-refresh") == 1
            && ours("lancerest-mv-jobs-lance-heartbeat-#") == 1,
        () -> state() + "; relays listening: " + relays.stream()
            .filter(SessionLifetimeTest::listening).toList());
    assertTrue(listening(relayBefore), "the base session's configuration stays open");
    assertTrue(ours("lancerest-credential-relay-lance-#") <= 4, ours().toString());
  }

  @Test
  @Order(3)
  void aSessionWhoseCatalogFailsToInitializeHoldsNothing() {
    int keys = shares().size();
    int leases = shares().reaper().pending();
    SparkSession s = base.newSession();
    configure(s, Map.of("connect-timeout-ms", "soon"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> sql(s, "SHOW TABLES IN lance.sessions"));
    assertTrue(e.getMessage().contains("connect-timeout-ms"), e.getMessage());
    assertEquals(keys, shares().size(), "its configuration was closed at once: " + state());
    assertTrue(shares().reaper().pending() <= leases, "its lease was released at once");
  }

  @Test
  @Order(4)
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
    assertEquals(port, relayPort(catalog(a)));
    assertEquals(port, relayPort(catalog(b)));

    // Closing one session's catalog leaves the other's working; the closed one says so.
    catalog(a).close();
    assertEquals(30L, sql(b, "SELECT count(*) FROM lance.sessions.src WHERE id >= 0").get(0)
        .getLong(0));
    IllegalStateException closed = assertThrows(IllegalStateException.class,
        () -> sql(a, "SHOW TABLES IN lance.sessions"));
    assertTrue(closed.getMessage().startsWith("The Lance REST client of " + proxy.uri()
        + " is closed"), closed.getMessage());
  }

  /**
   * The end of the context closes what every configuration shared; an ASYNC refresh still
   * waiting for a thread then never starts, and its job ends CANCELLED saying why.
   */
  @Test
  @Order(5)
  void stoppingTheContextEndsEveryThreadTheCatalogsSharedAndTheRefreshesNotStarted()
      throws Exception {
    SparkSession s = base.newSession();
    configure(s, Map.of());
    s.conf().set(JobService.ASYNC_THREADS_CONF, "1");
    sql(s, "CREATE TABLE lance.sessions.docs (id BIGINT, body STRING)");
    sql(s, "INSERT INTO lance.sessions.docs SELECT id, concat('w', id, ' x') FROM range(0, 200)");
    sql(s, "CREATE MATERIALIZED VIEW lance.sessions.words USING CHUNKER '"
        + JobLogTest.SlowWords.class.getName() + "' OPTIONS (input_columns = 'body') AS "
        + "SELECT id, body FROM lance.sessions.docs WITH NO DATA");
    // 40 ms a row: the first runs for seconds, the second waits for the one ASYNC thread
    sql(s, "REFRESH MATERIALIZED VIEW lance.sessions.words ASYNC WITH (job_id = 'stop-running', "
        + "source_task_size = 2)");
    sql(s, "REFRESH MATERIALIZED VIEW lance.sessions.words ASYNC WITH (job_id = 'stop-queued')");
    assertTrue(ours().size() > 0, "the catalog's threads run: " + ours());

    base.sparkContext().stop();

    long end = System.nanoTime() + GC_WAIT.toNanos();
    while (!ours().isEmpty()) {
      if (System.nanoTime() > end) {
        fail("Waited " + GC_WAIT.toSeconds() + " s for every thread of the catalog and the "
            + "engine to end after the context stopped; still running: " + ours());
      }
      Thread.sleep(100);
    }
    Map<String, String[]> jobs = jobLog();
    assertEquals("CANCELLED", jobs.get("stop-queued")[0]);
    assertEquals("ASYNC refresh job stop-queued did not run: the SparkContext stopped before it "
        + "started; nothing was refreshed. Run the refresh again in a running session",
        jobs.get("stop-queued")[1]);
    assertEquals("FAILED", jobs.get("stop-running")[0], "the running one failed with Spark: "
        + jobs.get("stop-running")[1]);
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> catalog(s).listNamespaces());
    assertTrue(e.getMessage().contains(" is closed"), e.getMessage());
  }

  /** The newest status and message of every job in the job log, read without Spark. */
  static Map<String, String[]> jobLog() throws Exception {
    String location;
    try (LanceRestClient c = server.newClient()) {
      location = c.describeTable(new DescribeTableRequest().id(List.of("__system", "mv_jobs")))
          .getLocation();
    }
    Map<String, Long> seqs = new HashMap<>();
    Map<String, String[]> out = new HashMap<>();
    try (BufferAllocator a = new RootAllocator();
        Dataset ds = Dataset.open(location, a);
        LanceScanner scan = ds.newScan(new ScanOptions.Builder()
            .columns(List.of("job_id", "seq", "status", "message")).build());
        ArrowReader r = scan.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        VarCharVector id = (VarCharVector) root.getVector("job_id");
        BigIntVector seq = (BigIntVector) root.getVector("seq");
        VarCharVector status = (VarCharVector) root.getVector("status");
        VarCharVector message = (VarCharVector) root.getVector("message");
        for (int i = 0; i < root.getRowCount(); i++) {
          String job = new String(id.get(i), java.nio.charset.StandardCharsets.UTF_8);
          if (seq.get(i) > seqs.getOrDefault(job, Long.MIN_VALUE)) {
            seqs.put(job, seq.get(i));
            out.put(job, new String[] {
                new String(status.get(i), java.nio.charset.StandardCharsets.UTF_8),
                message.isNull(i) ? null
                    : new String(message.get(i), java.nio.charset.StandardCharsets.UTF_8)});
          }
        }
      }
    }
    return out;
  }
}
