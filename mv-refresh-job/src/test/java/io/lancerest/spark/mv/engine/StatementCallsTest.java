package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.spark.catalog.ForwardingProxy;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a client-managed CREATE and REFRESH cost in DescribeTable calls, counted by a proxy in
 * front of the real server: each statement resolves the view and its source once and passes
 * what it found down, rather than describing them again at every step.
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
