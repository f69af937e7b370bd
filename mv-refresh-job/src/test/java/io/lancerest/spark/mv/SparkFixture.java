package io.lancerest.spark.mv;

import org.apache.spark.sql.SparkSession;

/**
 * One local SparkSession for the Spark tests of this package tree: our SQL extensions next to
 * lance-spark's, a catalog named {@value #CATALOG}, and the recording materialized-view API.
 *
 * <p>A session of {@link TestSpark}'s: its settings are session-level (catalog and factory in
 * the session conf), so the other test classes on the JVM's context do not see them.
 */
public final class SparkFixture {
  public static final String CATALOG = "mvtest";
  private static SparkSession spark;

  private SparkFixture() {}

  public static synchronized SparkSession spark() {
    if (spark == null) {
      spark = TestSpark.newSession();
      spark.conf().set("spark.sql.catalog." + CATALOG, NamedTestCatalog.class.getName());
      spark.conf().set(MaterializedViews.FACTORY_CONF, "io.lancerest.spark.mv.sql.RecordingViews");
    }
    SparkSession.setActiveSession(spark);
    return spark;
  }
}
