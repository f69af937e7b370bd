package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.S3ProxyFixture;
import io.lancerest.testing.ClusterSpark;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Encoders;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Everything of {@link ObjectStoreScenarios} on a Spark standalone cluster (executors in JVMs of
 * their own): CTAS, MERGE, time travel, DROP … PURGE, and the three view kinds created and
 * refreshed after INSERT, UPDATE and DELETE and with {@code force}, on S3 (s3proxy), give the
 * rows of the same statements on a local-folder namespace of the same cluster, with every task
 * run by an executor, and every object they write under the tables' and views' own locations;
 * a chunker view's errors table and a failed UDTF refresh's checkpoints are on S3 too. Also, on the local folder: each view kind refreshed incrementally with its
 * writes in Spark tasks equals the source's SELECT or a from-scratch view, without duplicates.
 * The search functions run in an executor on S3 and give a full scan's rows.
 */
@Tag("slow")
class ObjectStoreClusterTest {
  static ClusterSpark cluster;
  static S3ProxyFixture s3;
  static EngineFixture onS3;
  static EngineFixture local;
  static final Set<String> TASK_EXECUTORS = ConcurrentHashMap.newKeySet();
  static final AtomicInteger TASKS = new AtomicInteger();

  @BeforeAll
  static void start() {
    cluster = new ClusterSpark();
    try {
      cluster.context.addSparkListener(new SparkListener() {
        @Override
        public void onTaskEnd(SparkListenerTaskEnd end) {
          TASKS.incrementAndGet();
          TASK_EXECUTORS.add(end.taskInfo().executorId());
        }
      });
      s3 = S3ProxyFixture.start();
      Map<String, String> server = new HashMap<>(s3.storageOptions("storage."));
      server.put("root", s3.uri("cluster"));
      onS3 = EngineFixture.onServer(server, s3.storageOptions("storage."), cluster.master());
      local = new EngineFixture(Map.of("mv.mode", "client"), cluster.master());
      // Query views write in Spark tasks too, not on the driver, on both sides.
      for (EngineFixture f : new EngineFixture[] {onS3, local}) {
        f.spark.conf().set("spark.lancerest.mv.query.localRefreshMaxRows", "0");
        f.spark.conf().set("spark.lancerest.mv.chunker.localRefreshMaxParents", "0");
      }
    } catch (RuntimeException | Error e) {
      stop();
      throw e;
    }
  }

  @AfterAll
  static void stop() {
    try {
      for (EngineFixture f : new EngineFixture[] {onS3, local}) {
        if (f != null) {
          f.close();
        }
      }
      if (s3 != null) {
        s3.close();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
        cluster = null;
      }
    }
  }

  /**
   * {@code vector_search} and {@code search} of an S3 table run in an executor, which opens the
   * table with the catalog's storage options, and give the rows of a full scan.
   */
  @Test
  void searchesOfAnS3TableRunInAnExecutor() throws Exception {
    String t = "lance." + onS3.namespace("search") + ".docs";
    onS3.sql("CREATE TABLE " + t + " (id BIGINT, vec ARRAY<FLOAT>, text STRING) TBLPROPERTIES "
        + "('vec.arrow.fixed-size-list.size' = '2')");
    onS3.sql("INSERT INTO " + t + " SELECT id, array(CAST(sin(id) AS FLOAT), "
        + "CAST(cos(id * 0.3) AS FLOAT)), concat('word', id % 5) FROM range(0, 200, 1, 1)");
    onS3.sql("ALTER TABLE " + t + " CREATE INDEX vec_idx USING ivf_flat (vec) WITH "
        + "(num_partitions = 2)");
    onS3.sql("ALTER TABLE " + t + " CREATE INDEX text_idx USING fts (text) WITH ("
        + "base_tokenizer = 'simple', language = 'English', max_token_length = 40, lower_case = "
        + "true, stem = false, remove_stop_words = false, ascii_folding = false, "
        + "with_position = false)");
    // the 6 nearest to (0.5, -0.5) by squared L2, from a full scan
    List<String> expected = onS3.rows("SELECT id FROM (SELECT id, pow(vec[0] - 0.5, 2) + "
        + "pow(vec[1] + 0.5, 2) AS d FROM " + t + " ORDER BY d LIMIT 6)");
    List<String> matching = onS3.rows("SELECT id FROM " + t + " WHERE text = 'word3'");
    // each search alone in the window: the full scans' task ends are delivered before it opens
    tasksOf(() -> assertEquals(expected, onS3.rows("SELECT id FROM vector_search('" + t
        + "', 'vec', array(0.5, -0.5), 6, nprobes => 2)")));
    tasksOf(() -> assertEquals(matching, onS3.rows("SELECT id FROM search('" + t
        + "', 'word3', 100)")));
  }

  /** Runs {@code query} and checks its tasks, and only its tasks, ran on executors. */
  private static void tasksOf(Runnable query) throws java.util.concurrent.TimeoutException {
    // the listener bus reports task ends asynchronously: drain it around the query (60 s each)
    cluster.context.listenerBus().waitUntilEmpty(60_000);
    TASK_EXECUTORS.clear();
    query.run();
    cluster.context.listenerBus().waitUntilEmpty(60_000);
    assertFalse(TASK_EXECUTORS.isEmpty() || TASK_EXECUTORS.contains("driver"),
        "the search's tasks ran on the cluster's executors: " + TASK_EXECUTORS);
  }

  /** A chunker view on S3, refreshed in the cluster's executors, keeps serving search. */
  @Test
  void aViewOnS3KeepsServingSearchThroughTenRefreshes() {
    SearchableViewScenario.run(onS3);
  }

  @Test
  void statementsOnS3OnTheClusterGiveTheLocalFolderRows() {
    Map<String, String> localStatus = new LinkedHashMap<>();
    Map<String, List<String>> expected = new LinkedHashMap<>(
        ObjectStoreScenarios.tables(local, null, null));
    expected.putAll(ObjectStoreScenarios.scenario(local, localStatus));
    expected.remove("ns");
    TASK_EXECUTORS.clear();
    int tasksBefore = TASKS.get();

    Map<String, String> s3Status = new LinkedHashMap<>();
    Map<String, List<String>> actual = new LinkedHashMap<>(
        ObjectStoreScenarios.tables(onS3, s3, null));
    Set<String> before = new TreeSet<>(s3.keys(""));
    actual.putAll(ObjectStoreScenarios.scenario(onS3, s3Status));
    ObjectStoreScenarios.assertWritesOnlyUnderTheirLocations(onS3, s3, "cluster",
        actual.remove("ns").get(0), before);

    assertEquals(expected.keySet(), actual.keySet());
    for (String step : expected.keySet()) {
      assertEquals(expected.get(step), actual.get(step), "step '" + step + "'");
      assertFalse(actual.get(step).isEmpty() && !step.equals("purged"), "step '" + step
          + "' has rows");
    }
    assertEquals(localStatus, s3Status, "refresh statuses");
    assertTrue(s3Status.values().stream().allMatch(s -> s.equals("DONE")), s3Status.toString());
    assertTrue(TASKS.get() > tasksBefore && !TASK_EXECUTORS.isEmpty(), "tasks ran on the "
        + "cluster's executors: " + TASK_EXECUTORS);
    assertTrue(s3.keys("cluster/").stream().anyMatch(k -> k.contains("/_versions/")),
        "the tables are on S3");
  }

  @Test
  void errorsTablesAndUdtfCheckpointsLiveOnS3() {
    ObjectStoreScenarios.errorsTablesAndUdtfCheckpointsLiveOnS3(onS3, s3);
  }

  @Test
  void tasksRunInExecutorJvms() {
    EngineFixture f = local;
    long me = ProcessHandle.current().pid();
    List<Long> pids = f.spark.range(0, 8, 1, 4).mapPartitions(
        (MapPartitionsFunction<Long, Long>) it -> List.of(ProcessHandle.current().pid())
            .iterator(), Encoders.LONG()).collectAsList();
    Set<Long> executors = Set.copyOf(cluster.cluster.executors().stream()
        .map(e -> e.pid()).toList());
    for (long p : pids) {
      assertNotEquals(me, p, "a task ran in the test JVM");
      assertTrue(executors.contains(p), p + " is no executor JVM of the Worker: " + executors);
    }
  }

  @Test
  void catalogAndEveryViewKind() {
    EngineFixture f = local;
    String ns = f.namespace("cl");
    String src = "lance." + ns + ".src";
    f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, cat STRING, score INT)");
    insert(src, 0, 60);
    assertEquals(List.of("60|1770"), f.rows("SELECT count(*), sum(id) FROM " + src));
    f.sql("UPDATE " + src + " SET score = score + 1000 WHERE id < 5");
    assertEquals(List.of("5"), f.rows("SELECT count(*) FROM " + src + " WHERE score >= 1000"));

    String q = "lance." + ns + ".q";
    String c = "lance." + ns + ".c";
    String u = "lance." + ns + ".u";
    f.sql(query(q, src));
    f.sql(chunker(c, src));
    f.sql(udtf(u, src));
    assertEquals(f.rows(select(src)), f.rows("SELECT id, n, s1 FROM " + q));

    insert(src, 60, 200);
    int tasksBefore = TASKS.get();
    for (String v : List.of(q, c, u)) {
      assertEquals("DONE", f.sql("REFRESH MATERIALIZED VIEW " + v).get(0).getString(1), v);
    }
    assertTrue(TASKS.get() > tasksBefore, "the refreshes ran no Spark task");
    assertEquals(f.rows(select(src)), f.rows("SELECT id, n, s1 FROM " + q));
    assertEquals(List.of("0"), f.rows("SELECT count(*) - count(DISTINCT __source_row_id) FROM "
        + q));
    f.sql(chunker(c + "_scratch", src));
    f.sql(udtf(u + "_scratch", src));
    assertEquals(f.rows("SELECT * FROM " + c + "_scratch"), f.rows("SELECT * FROM " + c));
    assertEquals(f.rows("SELECT * FROM " + u + "_scratch"), f.rows("SELECT * FROM " + u));
    assertEquals(List.of("0"), f.rows("SELECT count(*) - count(DISTINCT __source_row_id, "
        + "__child_index) FROM " + c));
    assertEquals(List.of("8"), f.rows("SELECT count(*) FROM " + u), "top 2 of 4 categories");

    assertFalse(TASK_EXECUTORS.isEmpty());
    assertFalse(TASK_EXECUTORS.contains("driver"), "tasks ran on the driver: " + TASK_EXECUTORS);
  }

  private static void insert(String src, int from, int to) {
    EngineFixture f = local;
    f.sql("INSERT INTO " + src + " SELECT id, concat('w', id, ' x', id % 7, ' yz'), "
        + "concat('c', id % 4), CAST((id * 37) % 1000 AS INT) FROM range(" + from + ", " + to
        + ")");
  }

  private static String select(String src) {
    return "SELECT id, concat(name, '!') AS n, score + 1 AS s1 FROM " + src
        + " WHERE score % 3 <> 0";
  }

  private static String query(String v, String src) {
    return "CREATE MATERIALIZED VIEW " + v + " AS " + select(src);
  }

  private static String chunker(String v, String src) {
    return "CREATE MATERIALIZED VIEW " + v + " USING CHUNKER "
        + "'io.lancerest.spark.mv.chunker.TextSplitter' OPTIONS (input_columns = 'name', "
        + "chunk_size = 6) AS SELECT id, name FROM " + src;
  }

  private static String udtf(String v, String src) {
    return "CREATE MATERIALIZED VIEW " + v + " USING UDTF 'io.lancerest.spark.mv.udtf.TopKUdtf'"
        + " PARTITION BY cat OPTIONS (k = 2, order_by = 'score') AS SELECT id, cat, score FROM "
        + src;
  }
}
