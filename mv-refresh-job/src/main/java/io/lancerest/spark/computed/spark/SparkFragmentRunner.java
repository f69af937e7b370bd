package io.lancerest.spark.computed.spark;

import io.lancerest.spark.computed.BackfillTaskSpec;
import io.lancerest.spark.computed.ComputedColumnException;
import io.lancerest.spark.computed.FragmentBackfill;
import io.lancerest.spark.computed.FragmentResult;
import io.lancerest.spark.computed.FragmentShares;
import io.lancerest.spark.computed.FragmentRunner;
import io.lancerest.spark.computed.FragmentTask;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * The fragments in at most as many Spark tasks as the application has cores, each computing its
 * share one fragment after another with one opened instance of the function (a model is loaded
 * once per task, not per fragment); the results come back to the driver, which commits them.
 */
final class SparkFragmentRunner implements FragmentRunner {
  private final SparkSession spark;

  SparkFragmentRunner(SparkSession spark) {
    this.spark = spark;
  }

  @Override
  public List<FragmentResult> run(BackfillTaskSpec spec, List<FragmentTask> tasks) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    String before = jsc.getLocalProperty("spark.job.description");
    jsc.setJobDescription("Backfill of column " + spec.column() + " of " + spec.table() + ": "
        + tasks.size() + " fragment(s)");
    try {
      List<List<FragmentTask>> shares = FragmentShares.split(tasks,
          Math.max(1, jsc.defaultParallelism()));
      List<FragmentResult> out = new ArrayList<>();
      jsc.parallelize(shares, shares.size()).map(share -> FragmentBackfill.runAll(spec, share))
          .collect().forEach(out::addAll);
      return out;
    } catch (Exception e) { // Spark's SparkException is checked, though Scala throws it
      for (Throwable c = e; c != null; c = c.getCause()) {
        if (c instanceof ComputedColumnException cc) {
          throw new ComputedColumnException(cc.getMessage(), e);
        }
      }
      throw new ComputedColumnException("Backfill of column '" + spec.column() + "' of table "
          + spec.table() + " failed in a Spark task: " + e.getMessage()
          + ". Fragments committed before are kept; backfill again to resume.", e);
    } finally {
      jsc.setJobDescription(before);
    }
  }
}
