package io.lancerest.examples.bench;

import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.engine.DefaultMaterializedViewsFactory;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.lance.namespace.RestAdapter;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * Many short sessions on one catalog configuration, as a Spark Connect or Thrift server opens
 * one per client. Catalog {@code lance} points at a server that requires an OAuth2 token and
 * vends storage credentials that expire (a {@link CountingProxy} in front of the dir server), so
 * each session's catalog would need a token refresher and a credential relay. Each session runs
 * {@code SHOW TABLES}, a filtered {@code SELECT count(*)} (a Spark job) and a {@code REFRESH
 * MATERIALIZED VIEW} (the job service), then is dropped. Every {@code every} sessions it prints
 * the JVM's live threads (all; those of the catalog and the view engine; and those of Spark's
 * block-manager pools, which the garbage collection fills to clean up broadcasts and which end
 * after 60 s idle), the heap used after a garbage collection, the process's open sockets ({@code
 * /proc/self/fd}: both ends of every loopback connection, as the servers run in this JVM), the
 * catalog instances still reachable, and the time per session; then the same after the
 * SparkContext stopped. No target: the figures say whether sessions leave anything behind.
 *
 * <pre>
 *   mvn -B -ntp -Pquickstart -DskipTests -pl examples -am verify \
 *       -Dquickstart.main=io.lancerest.examples.bench.SessionSoakBenchmark \
 *       -Dquickstart.args="sessions=1000 every=100"
 * </pre>
 */
public final class SessionSoakBenchmark {
  private SessionSoakBenchmark() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = ViewBench.args(argv);
    int sessions = Integer.parseInt(args.getOrDefault("sessions", "1000"));
    int every = Integer.parseInt(args.getOrDefault("every", "100"));
    Path dir = Files.createTempDirectory("session-soak");
    RestAdapter server = new RestAdapter("dir", Map.of("root", dir.toString()), "127.0.0.1", 0);
    server.start();
    try (CountingProxy proxy = new CountingProxy("http://127.0.0.1:" + server.getPort())) {
      proxy.requireOAuthAndVend();
      String c = "spark.sql.catalog.lance";
      SparkSession spark = SparkSession.builder().master("local[2]").appName("session-soak")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .config(c, "io.lancerest.spark.catalog.LanceRestCatalog")
          .config(c + ".uri", proxy.uri())
          .config(c + ".oauth2.client-id", "soak")
          .config(c + ".oauth2.client-secret", "soak-secret")
          .config(c + ".oauth2.token-uri", proxy.uri() + "/oauth/token")
          .config(MaterializedViews.FACTORY_CONF, DefaultMaterializedViewsFactory.class.getName())
          .withExtensions(new LanceRestSparkExtensions())
          .withExtensions(new LanceSparkSessionExtensions())
          .getOrCreate();
      spark.sparkContext().setLogLevel(args.getOrDefault("log", "WARN"));
      spark.sql("CREATE NAMESPACE lance.soak");
      spark.sql("CREATE TABLE lance.soak.src (id BIGINT, grp STRING)");
      spark.sql("INSERT INTO lance.soak.src SELECT id, concat('g', id % 10) FROM range(0, 1000)");
      spark.sql("CREATE MATERIALIZED VIEW lance.soak.v AS SELECT grp, id FROM lance.soak.src "
          + "WHERE id % 3 = 0");
      SparkSession.clearActiveSession();

      System.out.printf("session soak: %,d sessions on one catalog configuration (OAuth2, "
          + "vended credentials), %s, %d cores%n", sessions, ViewBench.loadAverage(),
          Runtime.getRuntime().availableProcessors());
      System.out.println("  sessions | threads | ours | block-manager | heap MiB | sockets | "
          + "catalogs reachable | s/session");
      List<WeakReference<Object>> catalogs = new ArrayList<>();
      long t0 = System.nanoTime();
      int since = 0;
      for (int i = 1; i <= sessions; i++) {
        catalogs.add(shortSession(spark));
        since++;
        if (i == 1 || i % every == 0 || i == sessions) {
          double perSession = (System.nanoTime() - t0) / 1e9 / since;
          print(Integer.toString(i), catalogs, perSession);
          t0 = System.nanoTime();
          since = 0;
        }
      }
      System.out.printf("OAuth2 tokens issued for %,d sessions: %d%n", sessions,
          proxy.tokensIssued());
      spark.stop();
      print("stopped", catalogs, 0);
    } finally {
      server.close();
      io.lancerest.examples.Warehouses.delete(dir);
    }
  }

  /** One session: three statements, then dropped; returns its catalog, weakly. */
  private static WeakReference<Object> shortSession(SparkSession root) {
    SparkSession s = root.newSession();
    try {
      s.sql("SHOW TABLES IN lance.soak").collectAsList();
      s.sql("SELECT count(*) FROM lance.soak.src WHERE id % 7 = 3").collectAsList();
      s.sql("REFRESH MATERIALIZED VIEW lance.soak.v").collectAsList();
      return new WeakReference<>(s.sessionState().catalogManager().catalog("lance"));
    } finally {
      SparkSession.clearActiveSession();
    }
  }

  /**
   * One line of figures, after a garbage collection and 5 s for what it releases (the REST
   * client keeps idle connections 4 s).
   */
  private static void print(String label, List<WeakReference<Object>> catalogs,
      double perSession) throws InterruptedException {
    System.gc();
    Thread.sleep(5_000);
    System.gc();
    Thread.sleep(300);
    int threads = 0;
    int ours = 0;
    int blockManager = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive()) {
        threads++;
        String name = t.getName();
        if (name.startsWith("lancerest-") || name.startsWith("lance-rest-")) {
          ours++;
        } else if (name.startsWith("block-manager-")) {
          blockManager++;
        }
      }
    }
    Runtime rt = Runtime.getRuntime();
    long heap = (rt.totalMemory() - rt.freeMemory()) >> 20;
    long reachable = catalogs.stream().filter(r -> r.get() != null).count();
    System.out.printf("  %8s | %7d | %4d | %13d | %8d | %7d | %18d | %s%n", label, threads, ours,
        blockManager, heap, sockets(), reachable,
        perSession == 0 ? "-" : String.format("%.3f", perSession));
  }

  /** Socket descriptors of this process; -1 where {@code /proc} is missing. */
  private static long sockets() {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(fd -> {
        try {
          return Files.readSymbolicLink(fd).toString().startsWith("socket:");
        } catch (IOException e) {
          return false;
        }
      }).count();
    } catch (IOException e) {
      return -1;
    }
  }
}
