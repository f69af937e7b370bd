package io.lancerest.spark.mv.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.testing.ExpiringKeyS3Proxy;
import io.lancerest.client.testing.VendingNamespace;
import io.lancerest.testing.ClusterSpark;
import io.lancerest.testing.StandaloneCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Expiring vended credentials on a Spark standalone cluster (executors in JVMs of their own):
 * 10-second S3 keys from a token-protected namespace ({@link VendingNamespace} in front of
 * lance-core's dir server on S3, keys refused after expiry by an {@link ExpiringKeyS3Proxy}). A
 * 1-minute chunker refresh, a UDTF refresh with resume checkpoints and a long SELECT outlive
 * several keys and give the right rows; no request goes out with an expired key; and the
 * catalog's token never reaches an executor's JVM arguments or environment, a task closure, or
 * the Spark event log.
 */
@Tag("slow")
class ExpiringCredentialsClusterTest {
  static final String TOKEN = "long-lived-cluster-token-7d2a41";
  static final Duration LIFETIME = Duration.ofSeconds(10);

  static Path eventLog;
  static Path tokenFile;
  static ClusterSpark cluster;
  static VendedS3 env;
  static ExpiringKeyS3Proxy keys;
  static VendingNamespace vending;
  static EngineFixture f;

  @BeforeAll
  static void start() throws IOException {
    eventLog = Files.createTempDirectory("cluster-event-log");
    cluster = new ClusterSpark(Map.of(
        "spark.eventLog.enabled", "true",
        "spark.eventLog.dir", eventLog.toUri().toString(),
        // task binaries stay readable (uncompressed) in the driver's block manager
        "spark.broadcast.compress", "false",
        "spark.cleaner.referenceTracking", "false",
        // a SparkConf entry, to show what Spark itself hands every executor
        "spark.lancerest.test.marker", "in-spark-conf"), 4);
    try {
      // Spark hands every spark.* setting of the session to every task (local properties, task
      // binaries): the token is given by reference, read from a file of the driver.
      tokenFile = Files.createTempFile("catalog-token", ".txt");
      Files.writeString(tokenFile, TOKEN);
      env = VendedS3.start("cluster-expiring", TOKEN, "file:" + tokenFile, LIFETIME,
          cluster.master(), Map.of("mv.mode", "client"));
      keys = env.keys;
      vending = env.vending;
      f = env.f;
    } catch (RuntimeException | AssertionError e) {
      stop();
      throw e;
    }
  }

  @AfterAll
  static void stop() {
    try {
      if (env != null) {
        env.close();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
      try {
        if (tokenFile != null) {
          Files.deleteIfExists(tokenFile);
        }
      } catch (IOException ignored) {
        // a temporary file
      }
    }
  }

  /** The words of each document, 100 ms a document. */
  public static final class SlowWords extends ExpiringCredentialsTest.SlowWords {
    public SlowWords() {
      super(100);
    }
  }

  /** The row count of each partition, 6 s a partition. */
  public static final class SlowCount extends ExpiringCredentialsTest.SlowCount {
    public SlowCount() {
      super(6_000);
    }
  }

  @Test
  void longStatementsOutliveTheirKeysAndTheTokenStaysOnTheDriver() throws Exception {
    String ns = f.namespace("xc");
    String t = "lance." + ns + ".docs";
    f.sql("CREATE TABLE " + t + " (id BIGINT, body STRING, grp STRING)");
    String c = "lance." + ns + ".words";
    // expanded by Spark tasks whose credentials expire, not on the driver
    f.spark.conf().set("spark.lancerest.mv.chunker.localRefreshMaxParents", "0");
    f.sql("CREATE MATERIALIZED VIEW " + c + " USING CHUNKER '" + SlowWords.class.getName()
        + "' OPTIONS (input_columns = 'body') AS SELECT id, body FROM " + t);
    for (int part = 0; part < 4; part++) {
      f.sql("INSERT INTO " + t + " SELECT id, concat('w', id, ' x', id % 7), concat('g', id % 6)"
          + " FROM range(" + (part * 300) + ", " + ((part + 1) * 300) + ", 1, 1)");
    }
    f.spark.udf().register("slow_len", (org.apache.spark.sql.api.java.UDF1<String, Integer>)
        s -> {
          ExpiringCredentialsTest.sleep(100);
          return s.length();
        }, DataTypes.IntegerType);
    long expiredBefore = keys.expired();
    long mintedBefore = keys.minted();

    // Three long statements at once on the executor's 4 cores (the functions sleep):
    // - a chunker refresh of about 1 minute (1,200 new documents, 100 ms each, 2 tasks);
    // - a UDTF refresh of 6 partitions, 6 s each, checkpointed as they end, on the 2 other
    //   cores (18 s, almost two key lifetimes);
    // - then a SELECT of about 30 s in one task.
    ExecutorService statements = Executors.newFixedThreadPool(3);
    String u = "lance." + ns + ".counts";
    long chunkerMs;
    long selectMs;
    Row r;
    try {
      Future<Long> chunker = statements.submit(() -> {
        long t0 = System.nanoTime();
        f.sql("REFRESH MATERIALIZED VIEW " + c + " WITH (concurrency = 2)");
        return (System.nanoTime() - t0) / 1_000_000;
      });
      Thread.sleep(3_000); // the chunker's tasks take their 2 cores first
      Future<?> udtf = statements.submit(() -> f.sql("CREATE MATERIALIZED VIEW " + u
          + " USING UDTF '" + SlowCount.class.getName() + "' PARTITION BY grp AS SELECT grp, id"
          + " FROM " + t));
      Future<Object[]> select = statements.submit(() -> {
        long t0 = System.nanoTime();
        Row row = f.spark.sql("SELECT count(*), sum(slow_len(body)) FROM (SELECT /*+ "
            + "COALESCE(1) */ body FROM " + t + " WHERE id < 300)").first();
        return new Object[] {row, (System.nanoTime() - t0) / 1_000_000};
      });
      chunkerMs = chunker.get(6, TimeUnit.MINUTES);
      udtf.get(1, TimeUnit.MINUTES);
      Object[] s = select.get(1, TimeUnit.MINUTES);
      r = (Row) s[0];
      selectMs = (Long) s[1];
    } finally {
      statements.shutdownNow();
    }
    assertEquals(2400L, f.spark.sql("SELECT count(*) FROM " + c).first().getLong(0));
    assertTrue(chunkerMs > 4 * LIFETIME.toMillis(), "the chunker refresh took " + chunkerMs
        + " ms");
    assertEquals(List.of("g0|200", "g1|200", "g2|200", "g3|200", "g4|200", "g5|200"),
        f.rows("SELECT grp, n FROM " + u + " ORDER BY grp"));
    assertEquals(300L, r.getLong(0));
    assertEquals(f.spark.sql("SELECT sum(length(body)) FROM " + t + " WHERE id < 300").first()
        .getLong(0), r.getLong(1));
    assertTrue(selectMs > 2 * LIFETIME.toMillis(), "the SELECT took " + selectMs + " ms");
    System.out.println("cluster, expiring credentials: chunker " + chunkerMs + " ms, SELECT "
        + selectMs + " ms");

    assertEquals(expiredBefore, keys.expired(), "no request went out with an expired key: "
        + keys);
    // and keys were renewed while the statements ran: "none expired" is not for lack of use
    assertTrue(keys.minted() - mintedBefore >= chunkerMs / LIFETIME.toMillis(), (keys.minted()
        - mintedBefore) + " keys minted during a " + chunkerMs + " ms refresh: " + keys);
    assertEquals(0, vending.unauthorized(), "nothing asked the server without the token: "
        + vending);
    System.out.println("cluster, expiring credentials: " + keys + "; " + vending);

    // The token: nowhere on the executors' side.
    List<StandaloneCluster.Executor> executors = cluster.cluster.executors();
    assertFalse(executors.isEmpty(), "executor JVMs alive");
    for (StandaloneCluster.Executor e : executors) {
      String cmd = procFile(e.pid(), "cmdline");
      String env = procFile(e.pid(), "environ");
      assertTrue(cmd.contains("CoarseGrainedExecutorBackend"), "read the executor's arguments");
      assertFalse(cmd.contains(TOKEN), "the token is in executor " + e + "'s JVM arguments");
      assertFalse(env.contains(TOKEN), "the token is in executor " + e + "'s environment");
    }
    String taskBinaries = driverBroadcasts();
    // What tasks carried: the relay's grant header (so the check reads the closures) ...
    assertTrue(taskBinaries.contains("x-lancerest-relay-grant"),
        "the task binaries hold the tables' namespace properties");
    // ... and never the token.
    assertTrue(taskBinaries.contains("spark.sql.catalog.lance.token"), "the task binaries hold "
        + "the session's settings (Spark's SQLExecutionRDD), the token's reference among them");
    assertFalse(taskBinaries.contains(TOKEN), "the token is in a task closure");
    String log = eventLogText();
    assertTrue(log.contains("SparkListenerTaskEnd"), "the event log was read");
    assertFalse(log.contains(TOKEN), "the token is in the Spark event log");

    // What Spark itself ships: every SparkConf entry reaches the executors' SparkConf, and every
    // spark.* setting of the session reaches each task of a SQL statement (local properties).
    // So a token given directly, in either, would reach executors; by reference, only the
    // reference does.
    String key = "spark.sql.catalog.lance.token";
    List<String> seen = f.spark.range(0, 2, 1, 2).mapPartitions(
        (MapPartitionsFunction<Long, String>) it -> List.of(
            SparkEnv.get().conf().get("spark.lancerest.test.marker", "absent") + ","
            + org.apache.spark.TaskContext.get().getLocalProperty(key)).iterator(),
        Encoders.STRING()).collectAsList();
    assertEquals(List.of("in-spark-conf,file:" + tokenFile, "in-spark-conf,file:" + tokenFile),
        seen);
  }

  private static String procFile(long pid, String name) {
    try {
      return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), name)),
          StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read /proc/" + pid + "/" + name, e);
    }
  }

  /** Every broadcast block the driver holds (task binaries among them), as text. */
  private static String driverBroadcasts() {
    org.apache.spark.storage.BlockManager bm = SparkEnv.get().blockManager();
    scala.collection.Iterator<org.apache.spark.storage.BlockId> ids = bm.getMatchingBlockIds(
        new scala.runtime.AbstractFunction1<org.apache.spark.storage.BlockId, Object>() {
          @Override
          public Object apply(org.apache.spark.storage.BlockId b) {
            return b.isBroadcast();
          }
        }).iterator();
    StringBuilder out = new StringBuilder();
    int blocks = 0;
    while (ids.hasNext()) {
      org.apache.spark.storage.BlockId id = ids.next();
      scala.Option<org.apache.spark.storage.BlockData> d = bm.getLocalBytes(id);
      if (d.isDefined()) {
        try {
          java.nio.ByteBuffer b = d.get().toByteBuffer();
          byte[] a = new byte[b.remaining()];
          b.get(a);
          out.append(new String(a, StandardCharsets.ISO_8859_1));
          blocks++;
        } finally {
          bm.releaseLock(id, scala.Option.empty());
        }
      }
    }
    assertTrue(blocks > 0, "the driver holds broadcast blocks");
    return out.toString();
  }

  private static String eventLogText() throws IOException {
    StringBuilder out = new StringBuilder();
    try (Stream<Path> files = Files.walk(eventLog)) {
      for (Path p : files.filter(Files::isRegularFile).toList()) {
        out.append(Files.readString(p, StandardCharsets.ISO_8859_1));
      }
    }
    return out.toString();
  }
}
