package io.lancerest.spark.mv.cli;

import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark session of a command-line main. {@code spark-submit} always sets a master (its
 * default is {@code local[*]}); started with plain {@code java -cp} or Maven, a main gets the
 * same default instead of Spark's "A master URL must be set".
 */
public final class MainSessions {
  private MainSessions() {}

  /** A builder named {@code appName}, with master {@code local[*]} unless one is configured. */
  public static SparkSession.Builder builder(String appName) {
    SparkSession.Builder b = SparkSession.builder().appName(appName);
    if (!new SparkConf().contains("spark.master")) {
      b.master("local[*]");
    }
    return b;
  }
}
