package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.engine.EngineFixture;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;

/**
 * The view fault suite's world, one per test class: a real directory REST server and a
 * SparkSession ({@link EngineFixture}, catalog {@value #DIRECT} straight to the server), a
 * {@link FaultProxy} in front of that server, and catalog {@value #FLAKY} through the proxy with
 * fast retries and no table cache, so every refresh through it asks the server afresh and the
 * proxy's rules see each request. Views are client-managed (the directory server has no
 * materialized-view routes).
 *
 * <p>Each test builds its own namespace with a source table and one view of each kind over it,
 * and checks convergence against a view of the same definition built from scratch.
 */
final class ViewFaultsFixture implements AutoCloseable {
  static final boolean LONG = Boolean.getBoolean("lancerest.longTests");
  static final String DIRECT = EngineFixture.CATALOG;
  static final String FLAKY = "flaky";
  private static final AtomicInteger IDS = new AtomicInteger();

  final EngineFixture f;
  final FaultProxy proxy;

  ViewFaultsFixture() {
    this(null);
  }

  /**
   * With {@code master} (e.g. {@code local[2,3]}: 2 threads, a task may fail 2 times) the
   * JVM's SparkContext must run with it: the class runs in a JVM of its own (own-jvm).
   */
  ViewFaultsFixture(String master) {
    f = new EngineFixture(Map.of("mv.mode", "client"),
        master == null ? io.lancerest.spark.mv.TestSpark.MASTER : master);
    f.spark.udf().register("faults_bang", (UDF1<String, String>) Injected::bang,
        DataTypes.StringType);
    proxy = FaultProxy.start(f.uri);
    String p = "spark.sql.catalog." + FLAKY;
    f.spark.conf().set(p, "io.lancerest.spark.catalog.LanceRestCatalog");
    Map.of("uri", proxy.uri(), "mv.mode", "client", "retry.initial-backoff-ms", "5",
        "retry.max-backoff-ms", "50", "cache.ttl-ms", "0")
        .forEach((k, v) -> f.spark.conf().set(p + "." + k, v));
  }

  /** The three view kinds, each a definition over {@code src (id, name, cat, score)}. */
  enum Kind {
    QUERY("AS SELECT id, faults_bang(name) AS n, score + 1 AS s1 FROM %s WHERE score % 3 <> 0"),
    CHUNKER("USING CHUNKER 'io.lancerest.faults.Injected$Splitter' OPTIONS "
        + "(input_columns = 'name', chunk_size = 6) AS SELECT id, faults_bang(name) AS name "
        + "FROM %s"),
    UDTF("USING UDTF 'io.lancerest.faults.Injected$TopK' PARTITION BY cat OPTIONS (k = 2, "
        + "order_by = 'score') AS SELECT id, faults_bang(cat) AS cat, score FROM %s");

    final String definition;

    Kind(String definition) {
      this.definition = definition;
    }

    String create(String view, String source) {
      return "CREATE MATERIALIZED VIEW " + view + " " + definition.replace("%s", source);
    }
  }

  /** One source table in a namespace of its own. */
  final class World {
    final String ns;
    final String src;
    final String srcName;
    int next;

    World(String prefix) {
      ns = f.namespace(prefix);
      srcName = "src";
      src = DIRECT + "." + ns + ".src";
      f.sql("CREATE TABLE " + src + " (id BIGINT, name STRING, cat STRING, score INT)");
    }

    /** Appends {@code n} rows with ids from {@link #next}: multi-word names, 4 categories. */
    World insert(int n) {
      f.sql("INSERT INTO " + src + " SELECT id, concat('w', id, ' x', id % 7, ' yz'), "
          + "concat('c', id % 4), CAST((id * 37) % 1000 AS INT) FROM range(" + next + ", "
          + (next + n) + ")");
      next += n;
      return this;
    }

    String view(String catalog, String name) {
      return catalog + "." + ns + "." + name;
    }

    /** Creates view {@code name} of {@code kind} (WITH DATA) through catalog {@value #DIRECT}. */
    String create(Kind kind, String name) {
      String v = view(DIRECT, name);
      f.sql(kind.create(v, src));
      return v;
    }

    /** The rows of the view, sorted, as text. */
    List<String> rows(String name) {
      return f.rows("SELECT * FROM " + view(DIRECT, name));
    }

    long version(String name) {
      return Long.parseLong(f.sql("SHOW TBLPROPERTIES " + view(DIRECT, name)
          + " ('current-version')").get(0).getString(1));
    }

    /**
     * The view holds what a view of the same definition built from scratch now holds (and, for
     * query views, what the SELECT returns), with no source row twice.
     */
    void assertConverged(Kind kind, String name) {
      String scratch = name + "_scratch" + IDS.incrementAndGet();
      create(kind, scratch);
      try {
        assertEquals(rows(scratch), rows(name), name + " differs from a from-scratch view");
        if (kind == Kind.QUERY) {
          assertEquals(f.rows("SELECT id, concat(name, '!') AS n, score + 1 AS s1 FROM " + src
              + " WHERE score % 3 <> 0"), f.rows("SELECT id, n, s1 FROM " + view(DIRECT, name)));
        }
        assertNoDuplicates(kind, name);
      } finally {
        f.sql("DROP MATERIALIZED VIEW " + view(DIRECT, scratch));
      }
    }

    /** No output row twice: per source row (query), per (parent, child) and per (cat, rank). */
    void assertNoDuplicates(Kind kind, String name) {
      String key = switch (kind) {
        case QUERY -> "__source_row_id";
        case CHUNKER -> "__source_row_id, __child_index";
        case UDTF -> "cat, rank";
      };
      String v = view(DIRECT, name);
      long all = f.sql("SELECT count(*) FROM " + v).get(0).getLong(0);
      long distinct = f.sql("SELECT count(*) FROM (SELECT DISTINCT " + key + " FROM " + v
          + ")").get(0).getLong(0);
      assertEquals(all, distinct, "duplicated rows in " + v + " by (" + key + ")");
    }
  }

  /**
   * The cases of a parameterized test to run: all with {@code -Dlancerest.longTests=true}, else
   * those named in {@code fast} (each case's first argument is its name).
   */
  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> subset(
      java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> all, String... fast) {
    java.util.Set<String> keep = java.util.Set.of(fast);
    return all.filter(a -> LONG || keep.contains(String.valueOf(a.get()[0])));
  }

  MaterializedViews flakyViews() {
    return MaterializedViews.forCatalog(f.spark, FLAKY);
  }

  @Override
  public void close() {
    try {
      proxy.close();
    } finally {
      f.close();
    }
  }
}
