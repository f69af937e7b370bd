package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.faults.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.lance.Dataset;

/**
 * Two CREATE TABLEs of one name racing on the real directory server, after both lost the answer
 * of their DeclareTable: each re-reads, finds the table declared without data, and goes on to
 * create its dataset. Lance's create must then let exactly one of them win and refuse the other,
 * never overwrite the winner's dataset (which an Overwrite commit after an existence check did).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CreateRaceTest {
  private static final String CATALOG = "lance_race";
  private SparkSession spark;
  private FaultProxy proxy;

  @BeforeAll
  void start() {
    SharedSpark shared = SharedSpark.get();
    spark = shared.spark;
    proxy = FaultProxy.start(shared.server.uri());
    String prefix = "spark.sql.catalog." + CATALOG;
    spark.conf().set(prefix, LanceRestCatalog.class.getName());
    spark.conf().set(prefix + ".uri", proxy.uri());
    spark.conf().set(prefix + ".cache.ttl-ms", "0");
    spark.conf().set(prefix + ".retry.initial-backoff-ms", "5");
  }

  @AfterAll
  void stop() {
    proxy.close();
  }

  @Test
  void ofTwoCreatorsAfterLostDeclareAnswersExactlyOneWinsAndNothingIsOverwritten()
      throws Exception {
    String nsName = SharedSpark.unique("race");
    String ns = CATALOG + "." + nsName;
    spark.sql("CREATE NAMESPACE " + ns).collectAsList();
    for (int round = 0; round < 3; round++) {
      String name = "t" + round;
      String table = ns + "." + name;
      proxy.reset();
      // Both DeclareTables reach the server (one declares, one is refused as a duplicate); both
      // answers are lost. Both creators then re-read the table, and wait for each other there so
      // that their dataset creates start together.
      proxy.on("POST", "table/declare").forId(name).times(2).loseAnswer();
      CyclicBarrier together = new CyclicBarrier(2);
      proxy.on("POST", "table/describe").forId(name).times(2).delayAnswer(Duration.ZERO)
          .afterForward(body -> await(together));

      List<String> columns = List.of("a BIGINT", "b STRING");
      List<Throwable> outcomes = new ArrayList<>(List.of(new Throwable(), new Throwable()));
      List<Thread> creators = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        int me = i;
        Thread t = new Thread(() -> {
          try {
            spark.sql("CREATE TABLE " + table + " (" + columns.get(me) + ")").collectAsList();
            outcomes.set(me, null);
          } catch (Throwable e) {
            outcomes.set(me, e);
          }
        }, "creator-" + i);
        creators.add(t);
        t.start();
      }
      for (Thread t : creators) {
        t.join(TimeUnit.SECONDS.toMillis(120));
      }

      assertEquals(2, proxy.upstream("table/declare"), proxy.upstreamCounts().toString());
      int winner = outcomes.get(0) == null ? 0 : 1;
      Throwable lost = outcomes.get(1 - winner);
      assertEquals(null, outcomes.get(winner), "round " + round + ": one creator succeeds");
      assertInstanceOf(TableAlreadyExistsException.class, lost, "round " + round + ": " + lost);
      assertTrue(lost.getMessage().contains(name), lost.getMessage());

      // The winner's table, in one version: the loser neither overwrote nor deregistered it.
      String winnerColumn = columns.get(winner).split(" ")[0];
      assertEquals(List.of(winnerColumn), List.of(spark.table(table).columns()));
      try (Dataset ds = Dataset.open(location(nsName, name))) {
        assertEquals(1, ds.listVersions().size(), "round " + round + ": versions "
            + ds.listVersions().size());
      }
      spark.sql("INSERT INTO " + table + " VALUES (" + (winner == 0 ? "7" : "'x'") + ")")
          .collectAsList();
      assertEquals(1L, spark.table(table).count());
    }
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
      throw new IllegalStateException("the other creator never re-read the table", e);
    }
  }

  private String location(String ns, String name) throws Exception {
    return spark.sessionState().catalogManager().catalog(CATALOG) instanceof LanceRestCatalog c
        ? c.loadTable(Identifier.of(new String[] {ns}, name)).properties().get("location")
        : null;
  }
}
