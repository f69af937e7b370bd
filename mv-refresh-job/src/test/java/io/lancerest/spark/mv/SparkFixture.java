package io.lancerest.spark.mv;

import io.lancerest.spark.LanceRestSparkExtensions;
import org.apache.spark.sql.SparkSession;
import org.lance.spark.extensions.LanceSparkSessionExtensions;

/**
 * One local SparkSession for the Spark tests of this package tree: our SQL extensions next to
 * lance-spark's, a catalog named {@value #CATALOG}, and the recording materialized-view API.
 *
 * <p>Other test classes of this module share the JVM and the SparkContext, and stop it when
 * they finish. So the session is rebuilt when its context was stopped, its settings are
 * session-level (extensions via the builder, catalog and factory via the session conf, nothing
 * in the SparkContext conf), and it does not stay the default session others would pick up.
 */
public final class SparkFixture {
  public static final String CATALOG = "mvtest";
  private static SparkSession spark;

  private SparkFixture() {}

  public static synchronized SparkSession spark() {
    if (spark == null || spark.sparkContext().isStopped()) {
      SparkSession.clearActiveSession();
      SparkSession.clearDefaultSession();
      spark = SparkSession.builder()
          .master("local[2]")
          .appName("mv-refresh-job-tests")
          .config("spark.ui.enabled", "false")
          .withExtensions(new LanceRestSparkExtensions())
          .withExtensions(new LanceSparkSessionExtensions())
          .getOrCreate();
      spark.conf().set("spark.sql.catalog." + CATALOG, NamedTestCatalog.class.getName());
      spark.conf().set(MaterializedViews.FACTORY_CONF, "io.lancerest.spark.mv.sql.RecordingViews");
      SparkSession.clearDefaultSession();
    }
    SparkSession.setActiveSession(spark);
    return spark;
  }
}
