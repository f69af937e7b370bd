package io.lancerest.spark.mv.sql;

import io.lancerest.spark.catalog.LanceRestCatalog;
import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;

/**
 * Which catalog a job id named without {@code IN catalog} belongs to: the current catalog when it
 * is a Lance catalog, else the one Lance catalog of the session whose job log holds the id.
 */
final class JobCatalogs {
  private static final String PREFIX = "spark.sql.catalog.";

  private JobCatalogs() {}

  /**
   * The catalog of {@code jobId} for {@code statement} ({@code "DESCRIBE JOB"}, {@code "CANCEL
   * JOB"}): {@code named} when given.
   */
  static String of(SparkSession spark, String named, String jobId, String statement) {
    if (named != null) {
      return named;
    }
    CatalogPlugin current = spark.sessionState().catalogManager().currentCatalog();
    if (current instanceof LanceRestCatalog) {
      return current.name();
    }
    List<String> lance = lanceCatalogs(spark);
    String name = "name the catalog: " + statement + " '" + jobId + "' IN <catalog>";
    if (lance.isEmpty()) {
      throw new MaterializedViewException("Job '" + jobId + "': the current catalog '"
          + current.name() + "' is not a " + LanceRestCatalog.class.getName() + ", and no "
          + "catalog of this session is one (spark.sql.catalog.<name> = "
          + LanceRestCatalog.class.getName() + "); " + name);
    }
    List<String> holding = new ArrayList<>();
    for (String c : lance) {
      if (holds(spark, c, jobId)) {
        holding.add(c);
      }
    }
    if (holding.size() == 1) {
      return holding.get(0);
    }
    throw new MaterializedViewException("Job '" + jobId + "' is " + (holding.isEmpty()
        ? "in the job log of none of this session's Lance catalogs " + lance
        : "in the job logs of several of this session's Lance catalogs " + holding)
        + " (the current catalog '" + current.name() + "' is not a Lance catalog); " + name);
  }

  /** The session's catalogs configured as a {@link LanceRestCatalog}, by name. */
  private static List<String> lanceCatalogs(SparkSession spark) {
    TreeSet<String> out = new TreeSet<>();
    spark.conf().getAll().foreach(kv -> {
      String key = kv._1();
      if (key.startsWith(PREFIX) && key.indexOf('.', PREFIX.length()) < 0
          && isLanceCatalog(kv._2())) {
        out.add(key.substring(PREFIX.length()));
      }
      return null;
    });
    return List.copyOf(out);
  }

  private static boolean isLanceCatalog(String className) {
    try {
      return LanceRestCatalog.class.isAssignableFrom(Class.forName(className.trim(), false,
          Thread.currentThread().getContextClassLoader()));
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static boolean holds(SparkSession spark, String catalog, String jobId) {
    try {
      MaterializedViews.forCatalog(spark, catalog).job(jobId);
      return true;
    } catch (RuntimeException notThere) {
      // not in its log, it keeps none, or the caller may not read it (403): not this one
      return false;
    }
  }
}
