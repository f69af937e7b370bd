package io.lancerest.spark.mv;

import java.util.Map;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.SparkSession;

/**
 * Reading a Lance dataset by path through lance-spark, whatever the user's catalogs are called.
 *
 * <p>lance-spark's data source resolves a path read through a Spark catalog: the one named by
 * option {@code catalog}, else the catalog named {@code lance} if the session has one, else a
 * {@code lance_default} it registers itself. Users commonly name the LanceRestCatalog {@code
 * lance}, and a path is not an identifier that catalog accepts, so every engine read names
 * lance-spark's own path catalog explicitly.
 */
public final class LanceReads {
  /** The catalog lance-spark registers for path reads. */
  public static final String PATH_CATALOG = "lance_default";

  private LanceReads() {}

  /** A reader of {@code format("lance")} bound to lance-spark's path catalog. */
  public static DataFrameReader reader(SparkSession spark, Map<String, String> storageOptions,
      Long version) {
    String key = "spark.sql.catalog." + PATH_CATALOG;
    if (!spark.conf().contains(key)) {
      spark.conf().set(key, "org.lance.spark.LanceNamespaceSparkCatalog");
    }
    DataFrameReader r = spark.read().format("lance").options(storageOptions)
        .option("catalog", PATH_CATALOG);
    if (version != null) {
      r = r.option("version", String.valueOf(version));
    }
    return r;
  }
}
