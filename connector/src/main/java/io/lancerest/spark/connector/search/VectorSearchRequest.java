package io.lancerest.spark.connector.search;

import java.io.Serializable;
import java.util.Locale;

/**
 * A nearest-neighbour search as the user asked for it, before it is checked against a table.
 *
 * @param column the vector column, or {@code null} for the table's only vector column
 * @param key the query vector
 * @param k how many rows to return
 * @param nprobes IVF partitions to search, or {@code null} for lance-core's default
 * @param refineFactor re-rank {@code k * refineFactor} candidates by exact distance, or {@code
 *     null}
 * @param distanceType {@code l2}, {@code cosine} or {@code dot}, or {@code null} for the index's
 *     (l2 without an index)
 */
public record VectorSearchRequest(String column, float[] key, int k, Integer nprobes,
    Integer refineFactor, String distanceType) implements Serializable {
  /**
   * The distance types a search of a float vector column takes, as users write them (lance-core's
   * {@code hamming} is for binary vectors, which no column here holds).
   */
  public static final java.util.List<String> DISTANCE_TYPES =
      java.util.List.of("l2", "cosine", "dot");

  public VectorSearchRequest {
    key = key.clone();
    distanceType = distanceType == null ? null : distanceType.toLowerCase(Locale.ROOT);
  }

  @Override
  public float[] key() {
    return key.clone();
  }
}
