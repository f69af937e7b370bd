package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.List;

/** The {@code src_version} rules, the same for every kind. */
public final class SourceVersions {
  private SourceVersions() {}

  /**
   * The source at the version a refresh goes to: {@code requested}, or the latest when {@code
   * null}, opened once for the attempt. A requested version must exist: versions start at 1.
   */
  static org.lance.Dataset target(String viewName, AttemptDatasets open, Long requested) {
    if (requested == null) {
      return open.sourceLatest();
    }
    if (requested >= 1) {
      org.lance.Dataset ds = open.sourceIfOpenable(requested);
      if (ds != null) {
        return ds;
      }
    }
    // Unopenable: a version past the latest is the caller's mistake, said as such; one the
    // source should have fails with lance-core's reason.
    resolve(viewName, requested, open.sourceLatest().version());
    return open.source(requested);
  }

  /**
   * The source version a refresh goes to: {@code requested}, or the latest when {@code null}.
   * It must exist: versions start at 1.
   */
  public static long resolve(String viewName, Long requested, long latest) {
    long v = requested == null ? latest : requested;
    if (v > latest || v < 1) {
      throw new InvalidOptionException("src_version " + v + " does not exist: the source of "
          + "view " + viewName + " is at version " + latest + " (give 1 to " + latest
          + ", or omit src_version for the latest)");
    }
    return v;
  }

  /**
   * Whether a cleanup of the source (VACUUM, lance-core's {@code cleanupWithPolicy}) removed
   * version {@code version}, the view's watermark, which could not be opened ({@code failure}):
   * the words for the log and EXPLAIN REFRESH when it did. Every kind needs that version to
   * tell what changed since; each says what it does instead.
   *
   * @param current the source at another version, opened: it lists the versions the source has
   * @throws MaterializedViewException when the source still lists the version: a failure to
   *     read, not a cleanup, which no fallback should hide
   */
  public static String removedByCleanup(String viewName, String uri, org.lance.Dataset current,
      long version, RuntimeException failure) {
    long oldest;
    boolean listed;
    try {
      List<org.lance.Version> versions = current.listVersions();
      oldest = versions.stream().mapToLong(org.lance.Version::getId).min()
          .orElse(current.version());
      // a cleanup may keep a tagged older version: the remaining ones need not be contiguous
      listed = versions.stream().anyMatch(v -> v.getId() == version);
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot list the versions of the source table of "
          + "view " + viewName + " at '" + uri + "': " + e.getMessage(), e);
    }
    if (listed) {
      String why = failure == null ? "unknown" : failure.getMessage();
      throw new MaterializedViewException("Cannot open version " + version + " of the source "
          + "table of view " + viewName + " at '" + uri + "', which the source still has (its "
          + "oldest version is " + oldest + "): " + why, failure);
    }
    return "source version " + version + " (the view's watermark) was removed by a cleanup of "
        + "the source (which no longer lists it; its oldest version is " + oldest + ")";
  }

  /** A view is never refreshed to a source version older than the one it reflects. */
  public static void requireForward(String viewName, long srcVersion, long watermark) {
    if (srcVersion < watermark) {
      throw new InvalidOptionException("src_version " + srcVersion + " is older than the "
          + "version view " + viewName + " already reflects (" + watermark + "); a view cannot "
          + "be refreshed backwards. Omit src_version or give " + watermark + " or later");
    }
  }
}
