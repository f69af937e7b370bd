package io.lancerest.spark.mv.refresh;

/**
 * What the driver decided before a kind plans an attempt, by rules that are the same for every
 * kind: the source version to refresh to, the version the view reflects, and whether the view
 * is rebuilt in full from the source and why.
 *
 * @param srcVersion the source version this attempt refreshes to (it exists, and is not older
 *     than {@code watermark} unless the source was replaced)
 * @param watermark the source version the view reflects; 0 before its first refresh
 * @param rebuild why every row of the view is computed again ({@link #FORCE}, {@link
 *     #SOURCE_REPLACED}); {@code null} when the kind may apply what changed since the
 *     watermark
 * @param watermarkRemoved a cleanup of the source removed the watermark version, so what
 *     changed since cannot be told and the kind rebuilds the view (the words of {@link
 *     SourceVersions#removedByCleanup}); {@code null} when it is there, or not needed
 * @param view the view table as this attempt read it: the kind plans from it and commits on
 *     top of its version, without opening the view again
 * @param srcVersionWritten when {@code srcVersion} of the source was written, as the commit
 *     records it ({@link io.lancerest.spark.mv.definition.SourceIdentity})
 * @param datasets the source and view as this attempt opened them, lent to the kind for its
 *     plan and its driver-side reads (never to be closed by it)
 */
public record RefreshTarget(long srcVersion, long watermark, String rebuild,
    String watermarkRemoved, ViewRead view, String srcVersionWritten,
    AttemptDatasets datasets) {
  /** The reason of a rebuild asked for with {@code force = true}. */
  public static final String FORCE = "force = true";
  /**
   * The reason of a rebuild over a source dropped and created again under the same name: the
   * watermark and row ids the view holds belong to the old table, so nothing of them is used.
   */
  public static final String SOURCE_REPLACED = "source replaced: rebuilt";

  /** Whether the kind must compute every row of the view again. */
  public boolean rebuildAll() {
    return rebuild != null || watermarkRemoved != null;
  }

  /** Whether the source is another table than the one the view was refreshed from. */
  public boolean sourceReplaced() {
    return SOURCE_REPLACED.equals(rebuild);
  }
}
