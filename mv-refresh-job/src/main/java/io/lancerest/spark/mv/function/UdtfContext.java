package io.lancerest.spark.mv.function;

import java.util.Map;
import org.apache.spark.sql.types.StructType;

/**
 * What a {@link BatchUdtf} call is about.
 *
 * @param partitionColumn the {@code partition_by} column, {@code _partition_id} for an IVF
 *     partitioned view, or {@code null} when the whole input is one partition
 * @param partitionKey the key of this partition (a Spark external value: {@code Integer} IVF
 *     partition id, {@code String}, {@code Long}, ...); {@code null} both for the NULL partition
 *     and for an unpartitioned view, told apart by {@link #partitioned()}
 * @param sourceVersion the source table version the view is being refreshed to
 * @param options the envelope's {@code options}
 * @param inputSchema the schema of the rows given to the call
 * @param outputSchema the declared output schema, as Spark types
 * @param attempt 1 for the first call on this partition, 2.. for retries
 */
public record UdtfContext(String partitionColumn, Object partitionKey, long sourceVersion,
    Map<String, String> options, StructType inputSchema, StructType outputSchema, int attempt) {
  public UdtfContext {
    options = Map.copyOf(options);
  }

  public boolean partitioned() {
    return partitionColumn != null;
  }

  /** An option of the envelope, or {@code fallback} when absent. */
  public String option(String key, String fallback) {
    return options.getOrDefault(key, fallback);
  }
}
