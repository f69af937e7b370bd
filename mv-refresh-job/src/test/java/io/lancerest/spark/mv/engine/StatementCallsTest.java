package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceJson;
import io.lancerest.client.testing.LogCapture;
import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.catalog.ForwardingProxy;
import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.server.MaterializedViewServer;
import io.lancerest.spark.mv.server.ServerConfig;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * What a client-managed CREATE and REFRESH cost in DescribeTable calls, counted by a proxy in
 * front of the real server, and in Lance opens: each statement resolves the view and its source
 * once and passes what it found, and what it opened, down, rather than describing and opening
 * them again at every step.
 */
class StatementCallsTest {
  private static final String DESCRIBE = "table/describe";
  private static EngineFixture f;
  private static ForwardingProxy proxy;

  @BeforeAll
  static void start() throws Exception {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    proxy = new ForwardingProxy(f.uri, f.root.toUri().toString(), false, 0);
    f.spark.conf().set("spark.sql.catalog." + EngineFixture.CATALOG + ".uri", proxy.uri());
    f.sql("CREATE NAMESPACE lance.calls");
    f.sql("CREATE TABLE lance.calls.docs (id BIGINT, doc STRING)");
    f.sql("INSERT INTO lance.calls.docs VALUES (1, 'a b c'), (2, 'd e')");
    // the job log is created by the first view statement of a catalog: not counted below
    f.sql("CREATE MATERIALIZED VIEW lance.calls.first AS SELECT id FROM lance.calls.docs");
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      proxy.close();
    } finally {
      f.close();
    }
  }

  private static Map<String, Integer> callsOf(String sql) {
    proxy.resetCounts();
    f.sql(sql);
    return proxy.counts();
  }

  @Test
  void aCreateWithDataDescribesTheNewViewOnceAndItsSourceOnce() {
    Map<String, Integer> calls = callsOf("CREATE MATERIALIZED VIEW lance.calls.c USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'doc', "
        + "chunk_size = '8', overlap = '0') AS SELECT id, doc FROM lance.calls.docs");
    // the view: "does it exist?" (not found), then where it was created; the source: Spark's
    // analysis of the SELECT, and the engine's DescribeTable for its location
    assertEquals(4, calls.get(DESCRIBE), calls.toString());
  }

  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aRefreshOfEveryKindDescribesTheViewOnceAndItsSourceOnce(ListedKind kind) {
    String ns = kind.namespaceWithSource(f, "calls");
    String v = "lance." + ns + ".v";
    f.sql("CREATE MATERIALIZED VIEW " + v + " " + kind.over("lance." + ns + ".src"));
    f.sql("INSERT INTO lance." + ns + ".src VALUES (900, '1', 'new row', 5)");
    Map<String, Integer> calls = callsOf("REFRESH MATERIALIZED VIEW " + v);
    assertEquals(2, calls.get(DESCRIBE), calls.toString());
    calls = callsOf("REFRESH MATERIALIZED VIEW " + v);
    assertEquals(2, calls.get(DESCRIBE), "nothing to do: " + calls);
  }

  /**
   * Every Lance open of a REFRESH through the engine ({@code LanceLocation} logs each, with its
   * version): the statement reads the view's definition, then one attempt opens the view once
   * (its plan, its reads, its commit and the maintenance after it) and the source once (another
   * version of it, such as the one the view reflects, is checked out of that open).
   */
  @ParameterizedTest
  @EnumSource(ListedKind.class)
  void aRefreshOfEveryKindOpensTheViewAndItsSourceAtMostTwice(ListedKind kind) {
    String ns = kind.namespaceWithSource(f, "opens");
    String v = "lance." + ns + ".v";
    String src = "lance." + ns + ".src";
    f.sql("CREATE MATERIALIZED VIEW " + v + " " + kind.over(src));
    // scattered change: a new row, an update and a delete in the first fragment
    f.sql("INSERT INTO " + src + " VALUES (900, '1', 'new row', 5)");
    f.sql("UPDATE " + src + " SET score = score + 1 WHERE id = 3");
    f.sql("DELETE FROM " + src + " WHERE id = 4");
    for (String when : List.of("after a change", "with nothing to do")) {
      Map<String, List<String>> opens = opensOf("REFRESH MATERIALIZED VIEW " + v);
      assertOpens(opens, location(v), "view " + v + " " + when);
      List<String> source = assertOpens(opens, location(src), "source " + src + " " + when);
      assertEquals(source.size(), new java.util.HashSet<>(source).size(),
          "a version of the source opened twice " + when + ": " + opens);
    }
  }

  /** The opens of {@code uri} (its versions), which must be one or two. */
  private static List<String> assertOpens(Map<String, List<String>> opens, String uri,
      String what) {
    List<String> at = opens.getOrDefault(uri, List.of());
    assertTrue(!at.isEmpty() && at.size() <= 2, what + " at " + uri + " opened " + at.size()
        + " times (at most 2); every open: " + opens);
    return at;
  }

  /** The versions each Lance table was opened at while {@code sql} ran, by location. */
  private static Map<String, List<String>> opensOf(String sql) {
    try (LogCapture log = new LogCapture(LanceLocation.class.getName())) {
      f.sql(sql);
      return opens(log.text());
    }
  }

  /** The versions each Lance table was opened at, by location, in {@code log}. */
  private static Map<String, List<String>> opens(String log) {
    Map<String, List<String>> out = new java.util.TreeMap<>();
    Matcher m = Pattern.compile("Opening Lance table (\\S+) at ([^\\n]+)").matcher(log);
    while (m.find()) {
      out.computeIfAbsent(m.group(1), k -> new java.util.ArrayList<>()).add(m.group(2).trim());
    }
    return out;
  }

  private static String location(String table) {
    List<Row> rows = f.sql("DESCRIBE TABLE EXTENDED " + table);
    for (Row r : rows) {
      if ("Location".equals(r.getString(0))) {
        return r.getString(1);
      }
    }
    throw new AssertionError("DESCRIBE TABLE EXTENDED " + table + " shows no Location: " + rows);
  }

  @Test
  void aRefreshDescribesTheViewOnceAndItsSourceOnce() {
    f.sql("CREATE MATERIALIZED VIEW lance.calls.q AS SELECT id, upper(doc) AS u "
        + "FROM lance.calls.docs");
    f.sql("INSERT INTO lance.calls.docs VALUES (3, 'f g h')");
    Map<String, Integer> calls = callsOf("REFRESH MATERIALIZED VIEW lance.calls.q");
    assertEquals(2, calls.get(DESCRIBE), calls.toString());
    calls = callsOf("REFRESH MATERIALIZED VIEW lance.calls.q");
    assertEquals(2, calls.get(DESCRIBE), "nothing to do: " + calls);
  }

  /**
   * EXPLAIN REFRESH checks a job log whose versions the server manages, if there is one: a
   * catalog that found none does not describe it again at every EXPLAIN.
   */
  @Test
  void anExplainRefreshDescribesAMissingJobLogOncePerCatalog() {
    SparkSession s = f.sessionWith(new LanceRestSparkExtensions(),
        new LanceSparkSessionExtensions());
    s.conf().set("spark.lancerest.mv.jobs.table", "mv_jobs_never_written");
    String explain = "EXPLAIN REFRESH MATERIALIZED VIEW lance.calls.first";
    try {
      SparkSession.setActiveSession(s);
      proxy.resetCounts();
      s.sql(explain).collectAsList();
      Map<String, Integer> first = proxy.counts();
      proxy.resetCounts();
      s.sql(explain).collectAsList();
      Map<String, Integer> again = proxy.counts();
      // the view and its source each time; the log, not there, the first time only
      assertEquals(3, first.get(DESCRIBE), "the first EXPLAIN: " + first);
      assertEquals(2, again.get(DESCRIBE), "the second EXPLAIN: " + again);
    } finally {
      SparkSession.setActiveSession(f.spark);
    }
  }

  /**
   * The view service's refresh route checks what the refresh would refuse before it queues it,
   * on the view as it has just described it: the caller's DescribeTable of the view and of its
   * source (whether the upstream lets the caller see them), the engine's of the view (its
   * definition and whether its versions are managed), and one more of the source (whether its
   * versions are managed): four, and one manifest read of the view. The queued refresh then
   * describes the view and its source once each, and opens the view twice.
   */
  @Test
  void aServiceRefreshRequestDescribesTheViewAndItsSourceTwiceBeforeItsRefresh()
      throws Exception {
    String ns = f.namespace("svc_calls");
    f.sql("CREATE TABLE lance." + ns + ".src (id BIGINT, doc STRING)");
    f.sql("INSERT INTO lance." + ns + ".src VALUES (1, 'a'), (2, 'b')");
    f.sql("CREATE MATERIALIZED VIEW lance." + ns + ".v AS SELECT id, upper(doc) AS u FROM lance."
        + ns + ".src");
    SparkSession served = f.sessionWith(new LanceRestSparkExtensions(),
        new LanceSparkSessionExtensions());
    // an upstream of its own, so that reading the job log to wait for the job counts nothing
    try (ForwardingProxy upstream = new ForwardingProxy(f.uri, f.root.toUri().toString(), false,
        0)) {
      MaterializedViewServer service = MaterializedViewServer.start(served, ServerConfig.parse(
          new String[] {"--upstream", upstream.uri(), "--port", "0", "--auto-refresh",
              "false"}));
      try {
        String route = "http://127.0.0.1:" + service.port() + "/v1/materialized_view/" + ns
            + "$v/refresh";
        awaitEnded(post(route)); // the service's first refresh finds its job log
        f.sql("INSERT INTO lance." + ns + ".src VALUES (3, 'c')");
        String viewLocation = location("lance." + ns + ".v");
        upstream.resetCounts();
        Map<String, List<String>> opens;
        try (LogCapture log = new LogCapture(LanceLocation.class.getName())) {
          assertEquals("DONE", awaitEnded(post(route)));
          opens = opens(log.text());
        }
        // the queued refresh starts at once, so the route is counted with it
        Map<String, Integer> calls = upstream.counts();
        assertEquals(6, calls.get(DESCRIBE), "the route (4) and the refresh it queued (2): "
            + calls);
        assertEquals(3, opens.getOrDefault(viewLocation, List.of()).size(), "the view's "
            + "manifest read by the route (1) and the refresh's opens of the view (2): " + opens);
      } finally {
        service.close();
      }
    } finally {
      SparkSession.setActiveSession(f.spark);
    }
  }

  private static final OkHttpClient HTTP = new OkHttpClient.Builder()
      .readTimeout(120, TimeUnit.SECONDS).build();

  /** POSTs an empty refresh request; the job id of the 202 answer. */
  private static String post(String url) throws java.io.IOException {
    try (Response r = HTTP.newCall(new Request.Builder().url(url).post(RequestBody.create(
        "{}".getBytes(StandardCharsets.UTF_8), MediaType.get("application/json"))).build())
        .execute()) {
      String text = r.body() == null ? "" : r.body().string();
      assertEquals(202, r.code(), url + ": " + text);
      return LanceJson.mapper().readTree(text).path("job_id").asText();
    }
  }

  /**
   * Waits (bounded) until job {@code jobId} has ended: its newest row in the job log, read
   * past the service (through the fixture's catalog, opening nothing but the log); its status.
   */
  private static String awaitEnded(String jobId) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    String last = null;
    while (System.nanoTime() < deadline) {
      List<Row> newest = f.sql("SELECT status FROM lance.__system.mv_jobs WHERE job_id = '"
          + jobId + "' ORDER BY seq DESC LIMIT 1");
      last = newest.isEmpty() ? null : newest.get(0).getString(0);
      if (last != null && !last.equals("RUNNING")) {
        return last;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("job " + jobId + " of the view service did not end within 120 s; "
        + "last status seen: " + last);
  }
}
