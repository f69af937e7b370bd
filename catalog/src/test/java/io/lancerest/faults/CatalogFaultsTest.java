package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.spark.connector.LanceTables;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.spark.LanceRuntime;

/**
 * Catalog DDL and DML through Spark SQL with a {@link FaultProxy} between the catalog and the
 * directory server. Reads must retry and succeed; a mutation must reach the server exactly once
 * (counted at the proxy's upstream side); and after a lost answer or a 5xx on a commit-like call
 * the catalog must find out what happened by re-reading, never by deleting data.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("slow")
class CatalogFaultsTest {
  static final String CAT = "fc";
  /** The catalog's read timeout; the "timeout" faults hold answers longer than this. */
  private static final int READ_TIMEOUT_MS = 1000;
  private FaultsFixture f;
  private FaultProxy proxy;
  private LanceRestClient direct;
  private String ns;

  @BeforeAll
  void start() {
    f = FaultsFixture.get();
    proxy = FaultProxy.start(f.server.uri());
    direct = f.directClient();
    f.registerCatalog(CAT, proxy.uri(), Map.of("read-timeout-ms", "" + READ_TIMEOUT_MS));
    ns = FaultsFixture.unique("cf");
    f.sql("CREATE NAMESPACE " + CAT + "." + ns);
    f.sql("CREATE TABLE " + CAT + "." + ns + ".base (id BIGINT, name STRING)");
    f.sql("INSERT INTO " + CAT + "." + ns + ".base VALUES (1, 'a'), (2, 'b'), (3, 'c')");
  }

  @BeforeEach
  void clearRules() {
    proxy.reset();
  }

  @AfterAll
  void stop() {
    proxy.close();
    direct.close();
  }

  private long count(String table) {
    return f.sql("SELECT count(*) FROM " + table).get(0).getLong(0);
  }

  private String location(String table) {
    return direct.describeTable(new DescribeTableRequest().id(List.of(ns, table))).getLocation();
  }

  private boolean listed(String table) {
    return f.sql("SHOW TABLES IN " + CAT + "." + ns).stream()
        .anyMatch(r -> r.getString(1).equals(table));
  }

  // ---------------------------------------------------------------- reads

  static Stream<Arguments> readFaults() {
    return Stream.of(
        Arguments.of("503", (Consumer<FaultProxy.Rule>) r -> r.status(503, null)),
        Arguments.of("503 Retry-After: 0", (Consumer<FaultProxy.Rule>) r -> r.status(503, "0")),
        Arguments.of("429", (Consumer<FaultProxy.Rule>) r -> r.status(429, null)),
        Arguments.of("429 Retry-After: 0", (Consumer<FaultProxy.Rule>) r -> r.status(429, "0")),
        Arguments.of("500", (Consumer<FaultProxy.Rule>) r -> r.status(500, null)),
        Arguments.of("502", (Consumer<FaultProxy.Rule>) r -> r.status(502, null)),
        Arguments.of("504", (Consumer<FaultProxy.Rule>) r -> r.status(504, null)),
        Arguments.of("connection dropped", (Consumer<FaultProxy.Rule>) FaultProxy.Rule::drop),
        Arguments.of("connection reset", (Consumer<FaultProxy.Rule>) FaultProxy.Rule::reset),
        Arguments.of("answer lost", (Consumer<FaultProxy.Rule>) FaultProxy.Rule::loseAnswer),
        Arguments.of("body truncated", (Consumer<FaultProxy.Rule>) FaultProxy.Rule::truncate),
        Arguments.of("slow answer (under the timeout)",
            (Consumer<FaultProxy.Rule>) r -> r.delayAnswer(Duration.ofMillis(300))),
        Arguments.of("read timeout", (Consumer<FaultProxy.Rule>) r -> r.delayAnswer(
            Duration.ofMillis(READ_TIMEOUT_MS + 300))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("describeTableRetriesAndTheQuerySucceedsCases")
  void describeTableRetriesAndTheQuerySucceeds(String name, Consumer<FaultProxy.Rule> fault) {
    FaultProxy.Rule rule = proxy.on("POST", "table/describe").times(2);
    fault.accept(rule);
    assertEquals(3, count(CAT + "." + ns + ".base"));
    // A failing answer is retried (and the retry faulted once more); a slow one is not.
    assertEquals(name.startsWith("slow") ? 1 : 2, rule.applied(), name);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("listingsRetryAndAreCompleteCases")
  void listingsRetryAndAreComplete(String name, Consumer<FaultProxy.Rule> fault) {
    fault.accept(proxy.on("GET", "table/list"));
    fault.accept(proxy.on("GET", "namespace/list"));
    assertTrue(listed("base"), name);
    assertTrue(f.sql("SHOW NAMESPACES IN " + CAT).stream()
        .anyMatch(r -> r.getString(0).equals(ns)), name);
  }

  @Test
  void insertsUnderReadFaultsLandExactlyOnce() throws Exception {
    String t = CAT + "." + ns + ".ins";
    f.sql("CREATE TABLE " + t + " (id BIGINT, v STRING)");
    proxy.on("POST", "table/describe").reset();
    proxy.on("POST", "table/describe").nth(2).status(503, null);
    proxy.on("POST", "table/describe").nth(3).loseAnswer();
    f.spark.range(0, 500).selectExpr("id", "cast(id as string) as v").writeTo(t).append();
    f.sql("INSERT INTO " + t + " VALUES (1000, 'x')");
    List<Row> r = f.sql("SELECT count(*), count(DISTINCT id) FROM " + t);
    assertEquals(501L, r.get(0).getLong(0));
    assertEquals(501L, r.get(0).getLong(1));
  }

  // ---------------------------------------------------------------- commit-like calls

  /** Faults on a mutation: after it was applied (outcome unknown) or before (not applied). */
  static Stream<Arguments> mutationFaults() {
    return Stream.of(
        Arguments.of("answer lost after applying",
            (Consumer<FaultProxy.Rule>) FaultProxy.Rule::loseAnswer),
        Arguments.of("reset after applying",
            (Consumer<FaultProxy.Rule>) FaultProxy.Rule::resetAfter),
        Arguments.of("500 after applying",
            (Consumer<FaultProxy.Rule>) r -> r.statusAfterApplying(500)),
        Arguments.of("502 after applying",
            (Consumer<FaultProxy.Rule>) r -> r.statusAfterApplying(502)),
        Arguments.of("504 after applying",
            (Consumer<FaultProxy.Rule>) r -> r.statusAfterApplying(504)),
        Arguments.of("read timeout after applying", (Consumer<FaultProxy.Rule>) r -> r.delayAnswer(
            Duration.ofMillis(READ_TIMEOUT_MS + 300))),
        Arguments.of("503 before applying", (Consumer<FaultProxy.Rule>) r -> r.status(503, null)),
        Arguments.of("503 Retry-After: 0 before applying",
            (Consumer<FaultProxy.Rule>) r -> r.status(503, "0")),
        Arguments.of("429 before applying", (Consumer<FaultProxy.Rule>) r -> r.status(429, null)),
        Arguments.of("dropped before applying", (Consumer<FaultProxy.Rule>) FaultProxy.Rule::drop),
        Arguments.of("reset before applying", (Consumer<FaultProxy.Rule>) FaultProxy.Rule::reset));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("createTableIsAppliedOnceAndUsableCases")
  void createTableIsAppliedOnceAndUsable(String name, Consumer<FaultProxy.Rule> fault) {
    String t = FaultsFixture.unique("ct");
    fault.accept(proxy.on("POST", "table/declare"));
    f.sql("CREATE TABLE " + CAT + "." + ns + "." + t + " (id BIGINT)");
    assertEquals(1, proxy.upstream("table/declare"), name + ": " + proxy.upstreamCounts());
    f.sql("INSERT INTO " + CAT + "." + ns + "." + t + " VALUES (1), (2)");
    assertEquals(2, count(CAT + "." + ns + "." + t));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("createTableAsSelectWritesEachRowOnceCases")
  void createTableAsSelectWritesEachRowOnce(String name, Consumer<FaultProxy.Rule> fault) {
    String t = CAT + "." + ns + "." + FaultsFixture.unique("ctas");
    fault.accept(proxy.on("POST", "table/declare"));
    f.sql("CREATE TABLE " + t + " AS SELECT * FROM " + CAT + "." + ns + ".base");
    assertEquals(1, proxy.upstream("table/declare"), name + ": " + proxy.upstreamCounts());
    assertEquals(3L, f.sql("SELECT count(DISTINCT id) FROM " + t).get(0).getLong(0));
    assertEquals(3, count(t));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("createNamespaceIsAppliedOnceCases")
  void createNamespaceIsAppliedOnce(String name, Consumer<FaultProxy.Rule> fault) {
    String n = FaultsFixture.unique("cn");
    fault.accept(proxy.on("POST", "namespace/create"));
    f.sql("CREATE NAMESPACE IF NOT EXISTS " + CAT + "." + n + " WITH DBPROPERTIES ('k' = 'v')");
    assertEquals(1, proxy.upstream("namespace/create"), name + ": " + proxy.upstreamCounts());
    assertTrue(f.sql("SHOW NAMESPACES IN " + CAT).stream()
        .anyMatch(r -> r.getString(0).equals(n)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dropTableForgetsTheTableAndKeepsItsDataCases")
  void dropTableForgetsTheTableAndKeepsItsData(String name, Consumer<FaultProxy.Rule> fault) {
    String t = FaultsFixture.unique("dt");
    f.sql("CREATE TABLE " + CAT + "." + ns + "." + t + " AS SELECT * FROM "
        + CAT + "." + ns + ".base");
    String location = location(t);
    fault.accept(proxy.on("POST", "table/deregister"));
    f.sql("DROP TABLE " + CAT + "." + ns + "." + t);
    assertEquals(1, proxy.upstream("table/deregister"), name + ": " + proxy.upstreamCounts());
    assertFalse(listed(t));
    assertTrue(LanceTables.datasetExists(location, Map.of()), "DROP keeps the data");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dropTablePurgeIsAppliedOnceCases")
  void dropTablePurgeIsAppliedOnce(String name, Consumer<FaultProxy.Rule> fault) {
    String t = FaultsFixture.unique("pt");
    f.sql("CREATE TABLE " + CAT + "." + ns + "." + t + " (id BIGINT)");
    fault.accept(proxy.on("POST", "table/drop"));
    f.sql("DROP TABLE " + CAT + "." + ns + "." + t + " PURGE");
    assertEquals(1, proxy.upstream("table/drop"), name + ": " + proxy.upstreamCounts());
    assertFalse(listed(t));
  }

  @Test
  void aRefusalThatPersistsIsReportedAndChangesNothing() {
    String t = FaultsFixture.unique("refused");
    proxy.on("POST", "table/declare").always().status(503, null);
    Exception e = assertThrows(ServiceUnavailableException.class,
        () -> f.sql("CREATE TABLE " + CAT + "." + ns + "." + t + " (id BIGINT)"));
    assertTrue(e.getMessage().startsWith("DeclareTable '" + ns + "." + t + "'"), e.getMessage());
    assertEquals(0, proxy.upstream("table/declare"));
    proxy.reset();
    assertFalse(listed(t));
  }

  static Stream<Arguments> describeTableRetriesAndTheQuerySucceedsCases() {
    return FaultsFixture.subset(readFaults(),
        "503", "429 Retry-After: 0", "connection reset", "body truncated",
        "read timeout");
  }

  static Stream<Arguments> listingsRetryAndAreCompleteCases() {
    return FaultsFixture.subset(readFaults(),
        "503", "connection reset", "body truncated");
  }

  static Stream<Arguments> createTableIsAppliedOnceAndUsableCases() {
    return FaultsFixture.subset(mutationFaults(),
        "answer lost after applying", "500 after applying",
        "503 before applying", "reset before applying");
  }

  static Stream<Arguments> createTableAsSelectWritesEachRowOnceCases() {
    return FaultsFixture.subset(mutationFaults(),
        "answer lost after applying", "503 before applying");
  }

  static Stream<Arguments> createNamespaceIsAppliedOnceCases() {
    return FaultsFixture.subset(mutationFaults(),
        "read timeout after applying",
        "503 before applying", "dropped before applying");
  }

  static Stream<Arguments> dropTableForgetsTheTableAndKeepsItsDataCases() {
    return FaultsFixture.subset(mutationFaults(),
        "answer lost after applying", "504 after applying",
        "503 before applying");
  }

  static Stream<Arguments> dropTablePurgeIsAppliedOnceCases() {
    return FaultsFixture.subset(mutationFaults(),
        "answer lost after applying", "reset after applying",
        "429 before applying");
  }

  // ---------------------------------------------------------------- data is never deleted

  @Test
  void recreatingADroppedTableLeavesTheDroppedDataAlone() throws Exception {
    String t = FaultsFixture.unique("again");
    String full = CAT + "." + ns + "." + t;
    f.sql("CREATE TABLE " + full + " AS SELECT * FROM " + CAT + "." + ns + ".base");
    String before = location(t);
    f.sql("DROP TABLE " + full); // forgets the table, keeps its data
    f.sql("CREATE TABLE " + full + " (id BIGINT)");
    assertEquals(0, count(full));
    try (Dataset old = Dataset.open(LanceRuntime.allocator(), before,
        new org.lance.ReadOptions.Builder().build())) {
      assertEquals(3, old.countRows(), "the dropped table's data at " + before);
    }
  }

  @Test
  void aTableWrittenByOthersWhileTheAnswerWasLostIsLeftAlone() throws Exception {
    String t = FaultsFixture.unique("raced");
    String[] location = new String[1];
    proxy.on("POST", "table/declare").forId(t).loseAnswer().afterForward(body -> {
      // Another engine writes the declared table while our answer is lost.
      try {
        location[0] = new ObjectMapper().readTree(body).get("location").asText();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Schema schema = new Schema(List.of(Field.nullable("other", new ArrowType.Int(64, true))));
      Dataset.create(LanceRuntime.allocator(), location[0], schema,
          new WriteParams.Builder().build()).close();
    });
    assertThrows(TableAlreadyExistsException.class,
        () -> f.sql("CREATE TABLE " + CAT + "." + ns + "." + t + " (id BIGINT)"));
    assertEquals(1, proxy.upstream("table/declare"));
    assertTrue(LanceTables.datasetExists(location[0], Map.of()), "the other engine's dataset");
    assertEquals("struct<other:bigint>",
        f.spark.table(CAT + "." + ns + "." + t).schema().simpleString(),
        "still declared, with the other engine's schema");
  }
}
