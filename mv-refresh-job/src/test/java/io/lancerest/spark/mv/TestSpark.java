package io.lancerest.spark.mv;

import io.lancerest.spark.LanceRestSparkExtensions;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * The one SparkContext of a test JVM of this module, and sessions on it. Starting a context
 * costs seconds and stopping one mid-build breaks every class that still holds a session, so
 * no test class starts or stops one: each takes {@link #newSession()} (its own catalogs, confs,
 * functions and temporary views) and the context lives until the JVM exits.
 *
 * <p>Sessions have our SQL extensions and lance-spark's. A class that needs another master
 * ({@code local[2,3]} for task retries) or that stops the context runs in a JVM of its own:
 * the {@code own-jvm} execution of this module's pom lists it.
 */
public final class TestSpark {
  public static final String MASTER = "local[2]";
  private static SparkSession root;

  private TestSpark() {}

  /** A new session on the JVM's context, started with {@link #MASTER} on first use. */
  public static SparkSession newSession() {
    return newSession(MASTER);
  }

  /**
   * A new session on the JVM's context, started with {@code master} on first use.
   *
   * @throws IllegalStateException if the context runs with another master
   */
  public static synchronized SparkSession newSession(String master) {
    SparkSession s = root(master).newSession();
    SparkSession.setActiveSession(s);
    return s;
  }

  /**
   * A new session on the JVM's context ({@link #MASTER}) whose SQL extensions are {@code
   * extensions}, applied in this order as {@code spark.sql.extensions} lists them (none: Spark
   * alone), instead of the context's two: for tests of how the extensions compose. It shares the
   * context's SharedState, as {@link #newSession()}'s sessions do.
   */
  @SafeVarargs
  public static synchronized SparkSession newSessionWith(
      scala.Function1<SparkSessionExtensions, scala.runtime.BoxedUnit>... extensions) {
    SparkSession r = root(MASTER);
    SparkSessionExtensions chosen = new SparkSessionExtensions();
    for (scala.Function1<SparkSessionExtensions, scala.runtime.BoxedUnit> e : extensions) {
      e.apply(chosen);
    }
    SparkSession s = new SparkSession(r.sparkContext(), scala.Option.apply(r.sharedState()),
        scala.Option.empty(), chosen, scala.collection.immutable.Map$.MODULE$.empty());
    SparkSession.setActiveSession(s);
    return s;
  }

  private static SparkSession root(String master) {
    if (root == null || root.sparkContext().isStopped()) {
      // A context another fixture started (SharedSpark, when -Dtest runs classes of both
      // kinds in one JVM) is used as it is; the builder below adds a session on it.
      SparkSession.clearActiveSession();
      SparkSession.clearDefaultSession();
      root = SparkSession.builder()
          .master(master)
          .appName("mv-refresh-job-tests")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .withExtensions(new LanceRestSparkExtensions())
          .withExtensions(new LanceSparkSessionExtensions())
          .getOrCreate();
      // no default session: each test class works in a session of its own
      SparkSession.clearDefaultSession();
    }
    String running = root.sparkContext().master();
    if (!running.equals(master)) {
      throw new IllegalStateException("This test class needs a SparkContext with master "
          + master + ", but this JVM's runs " + running + ": list the class in the own-jvm "
          + "execution of mv-refresh-job/pom.xml");
    }
    return root;
  }
}
