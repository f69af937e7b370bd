package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.LanceReads;
import java.util.Map;
import java.util.Objects;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The source of a UDTF view at one version: where the Lance table is (for its vector index) and
 * how to read the source query's rows.
 *
 * @param reader produces the source query's output at {@code version} (projection and filter
 *     applied); with {@code withRowId} it must also carry the source's {@code _rowid}
 */
public record UdtfSource(String location, Map<String, String> storageOptions, long version,
    Reader reader) {

  /** Reads the source query's rows. */
  @FunctionalInterface
  public interface Reader {
    Dataset<Row> read(SparkSession spark, boolean withRowId);
  }

  public UdtfSource {
    Objects.requireNonNull(location, "location");
    Objects.requireNonNull(reader, "reader");
    storageOptions = storageOptions == null ? Map.of() : Map.copyOf(storageOptions);
  }

  /** Every column of the Lance table at {@code location}, version {@code version}. */
  public static UdtfSource lanceTable(String location, long version) {
    return lanceTable(location, Map.of(), version);
  }

  /**
   * Every column of the Lance table at {@code location}, version {@code version}, read like
   * every other engine read (through {@link LanceReads}, lance-spark's path catalog).
   */
  public static UdtfSource lanceTable(String location, Map<String, String> storageOptions,
      long version) {
    Map<String, String> options = storageOptions == null ? Map.of() : Map.copyOf(storageOptions);
    return new UdtfSource(location, options, version, (spark, withRowId) -> {
      Dataset<Row> df = LanceReads.load(spark, location, options, version);
      return withRowId ? df.select(df.col("*"), df.col("_rowid")) : df;
    });
  }
}
