package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.faults.ViewFaultsFixture.Kind;
import io.lancerest.faults.ViewFaultsFixture.World;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An executor task that fails in the middle of a refresh and is retried by Spark: master {@code
 * local[2,3]} (a task may fail twice), and the {@code faults_bang} UDF of the view's SELECT
 * throws in the first attempt of one task, after that task has read and passed on rows. (A
 * failure of the chunker or UDTF itself is not a Spark retry: the engine handles it per the
 * view's {@code error_handling}; see ViewRefreshFaultsTest.) The refresh completes with no duplicated and no
 * lost row: the failed attempt's output never reaches the commit.
 */
@Tag("slow")
class ViewTaskRetryTest {
  static ViewFaultsFixture x;

  @BeforeAll
  static void start() {
    x = new ViewFaultsFixture("local[2,3]");
  }

  @AfterAll
  static void stop() {
    x.close();
  }

  @AfterEach
  void disarm() {
    Injected.disarm();
    x.f.spark.conf().unset(LOCAL_WRITE);
    x.f.spark.conf().unset(LOCAL_EXPANSION);
  }

  /** Query views write small changes on the driver, with no task to retry: not under test. */
  private static final String LOCAL_WRITE = "spark.lancerest.mv.query.localRefreshMaxRows";
  /** The same for small chunker expansions, which run on the driver. */
  private static final String LOCAL_EXPANSION =
      "spark.lancerest.mv.chunker.localRefreshMaxParents";

  /** Bounded: query and chunker views; the long profile adds the UDTF view. */
  static Stream<Kind> kinds() {
    return Stream.of(Kind.values()).filter(k -> ViewFaultsFixture.LONG || k != Kind.UDTF);
  }

  @ParameterizedTest
  @MethodSource("kinds")
  void aTaskFailingOnceIsRetriedWithoutDuplicatesOrLoss(Kind kind) {
    World w = x.new World("tr_" + kind.name().toLowerCase()).insert(60);
    w.create(kind, "v");
    long version = w.version("v");
    w.insert(400);
    x.f.spark.conf().set(LOCAL_WRITE, "0");
    x.f.spark.conf().set(LOCAL_EXPANSION, "0");
    // past the first calls, so the failing attempt has output of its own by then
    Injected.arm(Injected.Mode.FIRST_ATTEMPT, 20, "faults_bang");
    List<Row> r = x.f.sql("REFRESH MATERIALIZED VIEW " + w.view(ViewFaultsFixture.FLAKY, "v"));
    assertEquals(1, Injected.THROWN.get(), "exactly one task attempt failed");
    Injected.disarm();
    assertEquals("DONE", r.get(0).getString(1), r.toString());
    assertEquals(version + 1, w.version("v"), "one commit");
    w.assertConverged(kind, "v");
  }
}
