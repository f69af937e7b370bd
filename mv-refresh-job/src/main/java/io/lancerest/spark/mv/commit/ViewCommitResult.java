package io.lancerest.spark.mv.commit;

import java.util.List;

/**
 * What one {@link ViewCommit} did.
 *
 * @param readVersion the view version the change was computed against
 * @param version the version the commit's Overwrite created (data, watermark, metadata)
 * @param rowsDeleted view rows removed (all rows, for a full replacement)
 * @param rowsAdded rows in the new fragments
 * @param fragmentsAdded number of new fragments
 * @param indexes what the commit did to each index of the view, by name
 * @param latestVersion the view's version once its indexes were carried over and updated
 *     (each a commit after {@code version}); {@code version} when it has none
 */
public record ViewCommitResult(long readVersion, long version, long rowsDeleted, long rowsAdded,
    int fragmentsAdded, List<IndexOutcome> indexes, long latestVersion) {
  public ViewCommitResult {
    indexes = List.copyOf(indexes);
  }

  /** {@code vidx: updated, 120 rows added, ...; fts: carried, ...}, or {@code null} for none. */
  public String indexSummary() {
    return indexes.isEmpty() ? null : String.join("; ", indexes.stream()
        .map(IndexOutcome::toString).toList());
  }
}
