package io.lancerest.spark.mv.indexes;

import io.lancerest.spark.connector.LanceLocation;
import java.util.List;
import org.lance.Dataset;

/**
 * The indexes of a view's table as {@code DESCRIBE MATERIALIZED VIEW} shows them, or why they
 * cannot be shown: a description of the view does not fail because its indexes cannot be read.
 *
 * @param indexes the indexes (empty when the table has none, or when {@code unavailable})
 * @param unavailable why they could not be listed; {@code null} when they were
 */
public record IndexListing(List<IndexSummary> indexes, String unavailable) {
  /** What a view engine that does not list indexes gives. */
  public static final IndexListing NOT_SUPPORTED = new IndexListing(List.of(),
      "not supported by this view engine");

  public IndexListing {
    indexes = List.copyOf(indexes);
  }

  /**
   * The indexes of {@code ds}, or why lance-core could not list them (a URI's credentials
   * masked).
   */
  public static IndexListing read(Dataset ds) {
    try {
      return new IndexListing(DatasetIndexes.list(ds), null);
    } catch (RuntimeException e) {
      return new IndexListing(List.of(), LanceLocation.withoutUserInfo(
          String.valueOf(e.getMessage())));
    }
  }
}
