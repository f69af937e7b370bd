package io.lancerest.spark.mv.commit;

/**
 * What one {@link ViewCommit} did.
 *
 * @param readVersion the view version the change was computed against
 * @param version the version the commit created
 * @param rowsDeleted view rows removed (all rows, for a full replacement)
 * @param rowsAdded rows in the new fragments
 * @param fragmentsAdded number of new fragments
 * @param droppedIndexes names of the indexes the read version had; lance-core's Overwrite does
 *     not carry indexes over, so these no longer exist on {@code version}
 */
public record ViewCommitResult(long readVersion, long version, long rowsDeleted, long rowsAdded,
    int fragmentsAdded, java.util.List<String> droppedIndexes) {
  public ViewCommitResult {
    droppedIndexes = java.util.List.copyOf(droppedIndexes);
  }
}
