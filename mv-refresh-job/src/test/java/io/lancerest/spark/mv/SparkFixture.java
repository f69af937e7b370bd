package io.lancerest.spark.mv;

import org.apache.spark.sql.SparkSession;

/**
 * One local SparkSession for every Spark test of this module (they run in one JVM): our SQL
 * extensions next to lance-spark's, a second catalog named {@code lance}, and the recording
 * materialized-view API.
 */
public final class SparkFixture {
  private static SparkSession spark;

  private SparkFixture() {}

  public static synchronized SparkSession spark() {
    if (spark == null) {
      spark = SparkSession.builder()
          .master("local[2]")
          .appName("mv-refresh-job-tests")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
          .config("spark.sql.extensions", "io.lancerest.spark.LanceRestSparkExtensions,"
              + "org.lance.spark.extensions.LanceSparkSessionExtensions")
          .config("spark.sql.catalog.lance",
              "io.lancerest.spark.mv.NamedTestCatalog")
          .config(MaterializedViews.FACTORY_CONF, "io.lancerest.spark.mv.sql.RecordingViews")
          .getOrCreate();
    }
    return spark;
  }
}
