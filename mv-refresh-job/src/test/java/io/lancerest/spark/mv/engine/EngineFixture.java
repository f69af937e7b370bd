package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.TestSpark;
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

/**
 * A real directory REST server (lance-core's RestAdapter) and a local SparkSession with catalog
 * {@value #CATALOG} = LanceRestCatalog on it, our SQL extensions next to lance-spark's, and the
 * default materialized-view engine. One per test class: {@link #close()} in {@code @AfterAll}.
 *
 * <p>The session is one of {@link TestSpark}'s on the JVM's one SparkContext: closing the
 * fixture closes the session's catalogs and the server, not the context.
 */
public final class EngineFixture implements AutoCloseable {
  public static final String CATALOG = "lance";
  private static final AtomicInteger NAMES = new AtomicInteger();

  public final Path root;
  public final RestAdapter server;
  public final String uri;
  public final SparkSession spark;
  private final List<SparkSession> others = new ArrayList<>();

  public EngineFixture(Map<String, String> catalogOptions) {
    this(catalogOptions, TestSpark.MASTER);
  }

  /** @param master the master this class needs ({@link TestSpark#newSession(String)}) */
  public EngineFixture(Map<String, String> catalogOptions, String master) {
    this(catalogOptions, master, null);
  }

  /**
   * A fixture whose dir server has {@code serverProperties} (its {@code root} included, e.g. an
   * {@code s3://} one with {@code storage.*} options); {@link #root} is then {@code null}.
   */
  public static EngineFixture onServer(Map<String, String> serverProperties,
      Map<String, String> catalogOptions) {
    return new EngineFixture(catalogOptions, TestSpark.MASTER, serverProperties);
  }

  /** {@link #onServer(Map, Map)} with sessions of {@code master} (a cluster's). */
  public static EngineFixture onServer(Map<String, String> serverProperties,
      Map<String, String> catalogOptions, String master) {
    return new EngineFixture(catalogOptions, master, serverProperties);
  }

  private EngineFixture(Map<String, String> catalogOptions, String master,
      Map<String, String> serverProperties) {
    if (serverProperties == null) {
      try {
        root = Files.createTempDirectory("mv-engine");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      server = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1", 0);
    } else {
      root = null;
      server = new RestAdapter("dir", serverProperties, "127.0.0.1", 0);
    }
    try {
      server.start();
    } catch (RuntimeException e) {
      throw new AssertionError("the dir namespace server on " + (root != null ? root
          : serverProperties.get("root")) + " did not start: " + e, e);
    }
    uri = "http://127.0.0.1:" + server.getPort();
    spark = TestSpark.newSession(master);
    String p = "spark.sql.catalog." + CATALOG;
    spark.conf().set(p, "io.lancerest.spark.catalog.LanceRestCatalog");
    spark.conf().set(p + ".uri", uri);
    catalogOptions.forEach((k, v) -> spark.conf().set(p + "." + k, v));
    spark.conf().set(MaterializedViews.FACTORY_CONF,
        DefaultMaterializedViewsFactory.class.getName());
    SparkSession.setActiveSession(spark);
  }

  /**
   * Another session on the same server and catalog configuration, with these SQL extensions in
   * this order ({@link TestSpark#newSessionWith}); its catalogs are closed with the fixture.
   */
  @SafeVarargs
  public final SparkSession sessionWith(
      scala.Function1<org.apache.spark.sql.SparkSessionExtensions, scala.runtime.BoxedUnit>...
          extensions) {
    SparkSession s = TestSpark.newSessionWith(extensions);
    scala.collection.Iterator<scala.Tuple2<String, String>> confs = spark.conf().getAll()
        .iterator();
    while (confs.hasNext()) {
      scala.Tuple2<String, String> c = confs.next();
      if (c._1().startsWith("spark.sql.catalog." + CATALOG)
          || c._1().equals(MaterializedViews.FACTORY_CONF)) {
        s.conf().set(c._1(), c._2());
      }
    }
    others.add(s);
    SparkSession.setActiveSession(spark);
    return s;
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
      // What the sessions' catalogs opened (clients, job services); the context stays.
      others.add(spark);
      for (SparkSession s : others) {
        var catalogs = s.sessionState().catalogManager();
        scala.collection.Iterator<String> names = catalogs.listCatalogs(scala.Option.empty())
            .iterator();
        while (names.hasNext()) {
          if (catalogs.catalog(names.next()) instanceof java.io.Closeable c) {
            c.close();
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      SparkSession.clearActiveSession();
      SparkSession.clearDefaultSession();
      server.close();
      if (root != null) {
        deleteQuietly(root);
      }
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
