package io.lancerest.spark.mv.indexes;

import java.util.List;

/**
 * One index of a Lance table, its segments taken together: a vector index gains a delta segment
 * each time rows are added to it without retraining, and searches read every segment.
 *
 * @param name the index name
 * @param type lance-core's index type in lower case: {@code btree}, {@code bitmap}, {@code
 *     inverted} (full text), {@code ivf_flat}, {@code ivf_pq}, …
 * @param columns the indexed columns
 * @param fragmentsIndexed fragments of the table that some segment covers
 * @param rowsIndexed live rows of the table that some segment covers
 * @param fragmentsUnindexed fragments no segment covers yet (searched without the index)
 * @param rowsUnindexed live rows no segment covers yet (searched without the index)
 * @param segments how many segments the index has (1 when built at once)
 */
public record IndexSummary(String name, String type, List<String> columns,
    long fragmentsIndexed, long rowsIndexed, long fragmentsUnindexed, long rowsUnindexed,
    int segments) {
  public IndexSummary {
    columns = List.copyOf(columns);
  }

  /**
   * One line for people: {@code ivf_flat on vec: 602 rows indexed, 50 not indexed, 2
   * segments}.
   */
  public String summary() {
    return type + " on " + String.join(", ", columns) + ": " + rowsIndexed + " rows indexed, "
        + rowsUnindexed + " not indexed, " + segments + (segments == 1 ? " segment" : " segments");
  }
}
