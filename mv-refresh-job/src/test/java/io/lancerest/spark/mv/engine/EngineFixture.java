package io.lancerest.spark.mv.engine;

import io.lancerest.spark.LanceRestSparkExtensions;
import io.lancerest.spark.mv.MaterializedViews;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.lance.namespace.RestAdapter;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * A real directory REST server (lance-core's RestAdapter) and a local SparkSession with catalog
 * {@value #CATALOG} = LanceRestCatalog on it, our SQL extensions next to lance-spark's, and the
 * default materialized-view engine. One per test class: {@link #close()} in {@code @AfterAll}.
 *
 * <p>The test classes of a JVM share one SparkContext (starting one costs seconds): each fixture
 * gets a session of its own on the running context (its catalogs, confs and functions), and
 * closing it closes its catalogs and server, not the context. A context with another master is
 * stopped first unless the caller started it for this fixture ({@code ViewFaultsFixture}).
 */
public final class EngineFixture implements AutoCloseable {
  public static final String CATALOG = "lance";
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static final String MASTER = "local[2]";

  public final Path root;
  public final RestAdapter server;
  public final String uri;
  public final SparkSession spark;

  public EngineFixture(Map<String, String> catalogOptions) {
    this(catalogOptions, false);
  }

  /** @param onRunningContext use the running SparkContext whatever its master */
  public EngineFixture(Map<String, String> catalogOptions, boolean onRunningContext) {
    try {
      root = Files.createTempDirectory("mv-engine");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1", 0);
    server.start();
    uri = "http://127.0.0.1:" + server.getPort();
    SparkSession.clearActiveSession();
    SparkSession.clearDefaultSession();
    scala.Option<org.apache.spark.SparkContext> running =
        org.apache.spark.SparkContext$.MODULE$.getActive();
    if (!onRunningContext && running.isDefined() && !running.get().master().equals(MASTER)) {
      running.get().stop();
    }
    // with no default session, a new session: on the running context, or on a new one
    spark = SparkSession.builder()
        .master(MASTER)
        .appName("mv-engine-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .withExtensions(new LanceRestSparkExtensions())
        .withExtensions(new LanceSparkSessionExtensions())
        .getOrCreate();
    String p = "spark.sql.catalog." + CATALOG;
    spark.conf().set(p, "io.lancerest.spark.catalog.LanceRestCatalog");
    spark.conf().set(p + ".uri", uri);
    catalogOptions.forEach((k, v) -> spark.conf().set(p + "." + k, v));
    spark.conf().set(MaterializedViews.FACTORY_CONF,
        DefaultMaterializedViewsFactory.class.getName());
    SparkSession.setActiveSession(spark);
  }

  /** A namespace no other test uses, created. */
  public String namespace(String prefix) {
    String ns = prefix + "_" + NAMES.incrementAndGet();
    sql("CREATE NAMESPACE " + CATALOG + "." + ns);
    return ns;
  }

  public List<Row> sql(String sql) {
    SparkSession.setActiveSession(spark);
    return spark.sql(sql).collectAsList();
  }

  /** Rows as "a|b|c" strings, sorted. */
  public List<String> rows(String sql) {
    List<String> out = new ArrayList<>();
    for (Row r : sql(sql)) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < r.length(); i++) {
        if (i > 0) {
          sb.append('|');
        }
        sb.append(r.isNullAt(i) ? "null" : r.get(i).toString());
      }
      out.add(sb.toString());
    }
    out.sort(null);
    return out;
  }

  public MaterializedViews views() {
    return MaterializedViews.forCatalog(spark, CATALOG);
  }

  @Override
  public void close() {
    try {
      // What the session's catalogs opened (clients, job services); the context stays.
      var catalogs = spark.sessionState().catalogManager();
      scala.collection.Iterator<String> names = catalogs.listCatalogs(scala.Option.empty())
          .iterator();
      while (names.hasNext()) {
        if (catalogs.catalog(names.next()) instanceof java.io.Closeable c) {
          c.close();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      SparkSession.clearActiveSession();
      SparkSession.clearDefaultSession();
      server.close();
      deleteQuietly(root);
    }
  }

  private static void deleteQuietly(Path dir) {
    try (java.util.stream.Stream<Path> all = Files.walk(dir)) {
      all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // a leftover temporary folder is no failure
    }
  }
}
