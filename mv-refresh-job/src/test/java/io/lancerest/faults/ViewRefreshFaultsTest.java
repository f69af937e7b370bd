package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.faults.ViewFaultsFixture.Kind;
import io.lancerest.faults.ViewFaultsFixture.World;
import io.lancerest.spark.mv.Probes;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.error.FunctionFailedException;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A refresh of each view kind interrupted in each phase: planning (the DescribeTable calls that
 * locate the view and its source, faulted by the proxy), writing (a failure inside the Spark
 * tasks), just before the commit, and just after it (the commit applied, the caller never told).
 * Each time the view is either its previous version or the complete new one, and the next
 * refresh converges to what a view built from scratch holds.
 *
 * <p>One view per kind is shared by the tests of the class; each test first appends source rows,
 * so it has a change to refresh, and leaves the view converged.
 */
@Tag("slow")
class ViewRefreshFaultsTest {
  static ViewFaultsFixture x;
  static final Map<Kind, World> WORLDS = new EnumMap<>(Kind.class);

  @BeforeAll
  static void start() {
    x = new ViewFaultsFixture();
    for (Kind k : Kind.values()) {
      World w = x.new World("rf_" + k.name().toLowerCase()).insert(40);
      w.create(k, "v");
      WORLDS.put(k, w);
    }
  }

  @AfterAll
  static void stop() {
    x.close();
  }

  @AfterEach
  void clear() throws Exception {
    x.proxy.reset();
    Injected.disarm();
  }

  private static List<Row> refresh(World w) {
    return x.f.sql("REFRESH MATERIALIZED VIEW " + w.view(ViewFaultsFixture.FLAKY, "v"));
  }

  /** The exception's chain as text, for assertions on what the user sees. */
  static String chain(Throwable e) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      sb.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
    }
    return sb.toString();
  }

  /** The view's version and rows before a failed refresh are still what it shows after it. */
  private static void assertUnchanged(World w, long version, List<String> rows) {
    assertEquals(version, w.version("v"), "the failed refresh committed a version");
    assertEquals(rows, w.rows("v"), "the failed refresh changed the view's rows");
  }

  // ---------------------------------------------------------------- planning: REST faults

  static Stream<Arguments> planningFaults() {
    Stream<Arguments> all = Stream.of(Kind.values()).flatMap(k -> Stream.of(
        // bounded: several faults in one refresh: the view's DescribeTable refused twice, the
        // source's reset, then answered but the answer lost
        Arguments.of(k + " 503x2 + reset + lost", k, (Consumer<FaultProxy>) p -> {
          p.on("*", "table/describe").forId("$v").status(503, null).times(2);
          p.on("*", "table/describe").forId("$src").reset();
          // (this rule sees only the requests the one above let through)
          p.on("*", "table/describe").forId("$src").loseAnswer();
        }),
        Arguments.of(k + " 429 Retry-After", k, (Consumer<FaultProxy>) p ->
            p.on("*", "table/describe").status(429, "0").times(2)),
        Arguments.of(k + " truncated", k, (Consumer<FaultProxy>) p ->
            p.on("*", "table/describe").forId("$src").truncate()),
        Arguments.of(k + " dropped", k, (Consumer<FaultProxy>) p ->
            p.on("*", "table/describe").forId("$v").drop()),
        Arguments.of(k + " 502 after applying", k, (Consumer<FaultProxy>) p ->
            p.on("*", "table/describe").statusAfterApplying(502).times(2))));
    return ViewFaultsFixture.subset(all, "QUERY 503x2 + reset + lost",
        "CHUNKER 503x2 + reset + lost", "UDTF 503x2 + reset + lost");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("planningFaults")
  void planningFaultsOnDescribeTableAreRetried(String name, Kind kind,
      Consumer<FaultProxy> faults) {
    World w = WORLDS.get(kind).insert(12);
    long version = w.version("v");
    faults.accept(x.proxy);
    List<Row> r = refresh(w);
    assertEquals("DONE", r.get(0).getString(1), r.toString());
    for (FaultProxy.Rule rule : x.proxy.rules()) {
      assertEquals(1, Math.min(1, rule.applied()), "a fault was not played: "
          + x.proxy.upstreamCounts());
    }
    assertEquals(version + 1, w.version("v"), "one commit");
    w.assertConverged(kind, "v");
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aRefusalThatPersistsFailsThePlanningAndChangesNothing(Kind kind) {
    World w = WORLDS.get(kind).insert(9);
    long version = w.version("v");
    List<String> before = w.rows("v");
    x.proxy.on("*", "table/describe").forId("$src").status(503, null).always();
    ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class,
        () -> refresh(w));
    assertEquals("DescribeTable '" + w.ns + ".src': service unavailable (server said: injected "
        + "503). The server or a proxy in front of it is down or overloaded; try again later "
        + "[HTTP 503]", e.getMessage());
    assertEquals(0, x.proxy.upstream("table/describe") - 1, "only the view's describe passed");
    assertUnchanged(w, version, before);
    x.proxy.reset();
    assertEquals("DONE", refresh(w).get(0).getString(1));
    w.assertConverged(kind, "v");
  }

  // ---------------------------------------------------------------- writing: task failures

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aFailureInsideTheTasksCommitsNothing(Kind kind) {
    World w = WORLDS.get(kind).insert(30);
    long version = w.version("v");
    List<String> before = w.rows("v");
    Injected.arm(Injected.Mode.ALWAYS, 3, switch (kind) {
      case QUERY -> "faults_bang";
      case CHUNKER -> "chunker";
      case UDTF -> "udtf";
    });
    // one type and one shape for every kind (KindRulesTest has the shape)
    FunctionFailedException e = assertThrows(FunctionFailedException.class, () -> refresh(w));
    assertTrue(e.getMessage().startsWith("Refresh of view " + w.view(ViewFaultsFixture.FLAKY,
        "v") + " (job "), e.getMessage());
    assertEquals("java.lang.IllegalStateException: injected failure in " + switch (kind) {
      case QUERY -> "faults_bang";
      case CHUNKER -> "chunker";
      case UDTF -> "udtf";
    }, e.firstCause(), chain(e));
    assertTrue(e.getMessage().endsWith(e.firstCause() + ". Nothing was committed; the view is "
        + "unchanged"), e.getMessage());
    assertTrue(Injected.THROWN.get() > 0);
    Injected.disarm();
    assertUnchanged(w, version, before);
    assertEquals("DONE", refresh(w).get(0).getString(1));
    w.assertConverged(kind, "v");
  }

  // ---------------------------------------------------------------- commit

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aFailureJustBeforeTheCommitLeavesThePreviousVersion(Kind kind) throws Exception {
    World w = WORLDS.get(kind).insert(11);
    long version = w.version("v");
    List<String> before = w.rows("v");
    // The same point for every kind: the refresh driver calls the listener just before it
    // commits what the kind computed.
    Probes crash = new Probes().beforeCommit(() -> {
      throw new IllegalStateException("injected crash before the commit");
    });
    RuntimeException e = assertThrows(RuntimeException.class, () -> x.flakyViews().refresh(
        List.of(w.ns, "v"), RefreshOptions.DEFAULTS, crash));
    assertEquals(IllegalStateException.class, e.getClass(), chain(e));
    assertEquals("injected crash before the commit", e.getMessage());
    clear();
    assertUnchanged(w, version, before);
    assertEquals("DONE", refresh(w).get(0).getString(1));
    w.assertConverged(kind, "v");
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aCrashRightAfterTheCommitLeavesTheCompleteNewVersion(Kind kind) {
    World w = WORLDS.get(kind).insert(13);
    long version = w.version("v");
    // every kind's commit is the refresh driver's, and so is the line it logs right after
    Class<?> engine = io.lancerest.spark.mv.refresh.RefreshDriver.class;
    String after = "committed view version";
    try (LogTrigger t = LogTrigger.arm(engine, after)) {
      RuntimeException e = assertThrows(RuntimeException.class, () -> refresh(w));
      assertTrue(chain(e).contains("injected crash after"), chain(e));
      assertEquals(1, t.fired.get());
    }
    // the commit was applied: the view is the complete new version ...
    assertEquals(version + 1, w.version("v"));
    w.assertConverged(kind, "v");
    // ... and the refresh the user runs again finds nothing left to do
    List<Row> again = refresh(w);
    assertEquals("SKIPPED", again.get(0).getString(1), again.toString());
    assertEquals(version + 1, w.version("v"));
  }
}
