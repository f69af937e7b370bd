package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.LogCapture;
import io.lancerest.spark.catalog.ForwardingProxy;
import io.lancerest.spark.connector.LanceLocation;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

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
      Map<String, List<String>> out = new java.util.TreeMap<>();
      Matcher m = Pattern.compile("Opening Lance table (\\S+) at ([^\\n]+)").matcher(log.text());
      while (m.find()) {
        out.computeIfAbsent(m.group(1), k -> new java.util.ArrayList<>()).add(m.group(2).trim());
      }
      return out;
    }
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
}
