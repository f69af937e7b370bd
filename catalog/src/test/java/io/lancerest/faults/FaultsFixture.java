package io.lancerest.faults;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.testing.RestServerFixture;
import io.lancerest.spark.catalog.LanceRestCatalog;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.params.provider.Arguments;

/**
 * What the classes of this package share in one JVM: the upstream REST server (lance-core's
 * {@code RestAdapter} over a temporary directory) and one SparkSession of their own, a new
 * session on whatever SparkContext the JVM already runs, so other packages' catalogs and
 * settings do not leak in. Each test class starts its own {@link FaultProxy} and registers its
 * catalogs in this session under names of its own.
 *
 * <p>Sizes: the default run is the bounded subset that {@code mvn verify} runs; with
 * {@code -Dlancerest.longTests=true} the load cases use the long sizes.
 */
final class FaultsFixture {
  static final boolean LONG = Boolean.getBoolean("lancerest.longTests");
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static FaultsFixture instance;

  final RestServerFixture server;
  final SparkSession spark;

  private FaultsFixture() {
    server = RestServerFixture.start();
    spark = SparkSession.builder()
        .master("local[2]")
        .appName("lance-rest-faults")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
        .newSession();
    Runtime.getRuntime().addShutdownHook(new Thread(server::close));
  }

  static synchronized FaultsFixture get() {
    if (instance == null) {
      instance = new FaultsFixture();
    }
    return instance;
  }

  /**
   * The cases of a parameterized test to run: all of them with {@code -Dlancerest.longTests=true},
   * otherwise those named in {@code fast} (the first argument of each case is its name).
   */
  static Stream<Arguments> subset(Stream<Arguments> all, String... fast) {
    Set<String> keep = Set.of(fast);
    return all.filter(a -> LONG || keep.contains(String.valueOf(a.get()[0])));
  }

  /** A name no other test of this JVM uses. */
  static String unique(String prefix) {
    return prefix + NAMES.incrementAndGet();
  }

  /**
   * Registers catalog {@code name} against {@code uri} with fast retries (so faults cost
   * milliseconds), the table cache off (every statement describes afresh, so the fault rules
   * see it), plus {@code extra}.
   */
  void registerCatalog(String name, String uri, Map<String, String> extra) {
    Map<String, String> o = new LinkedHashMap<>();
    o.put("uri", uri);
    o.put("retry.initial-backoff-ms", "5");
    o.put("retry.max-backoff-ms", "50");
    o.put("cache.ttl-ms", "0");
    o.putAll(extra);
    String prefix = "spark.sql.catalog." + name;
    spark.conf().set(prefix, LanceRestCatalog.class.getName());
    o.forEach((k, v) -> spark.conf().set(prefix + "." + k, v));
  }

  LanceRestClient directClient() {
    return server.newClient();
  }

  List<Row> sql(String s) {
    return spark.sql(s).collectAsList();
  }
}
