package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.definition.SourceIdentity;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/** The {@code src_version} rules, the same for every kind. */
public final class SourceVersions {
  private SourceVersions() {}

  /** The source's latest version, and when it was written ({@link SourceIdentity}). */
  record Latest(long version, String written) {}

  /** The latest version of the source table. */
  static Latest latest(String viewName, LanceLocation source) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = source.open(a, null)) {
      return new Latest(ds.version(), SourceIdentity.versionTime(ds));
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open the source table of view " + viewName
          + " at '" + source.uri() + "': " + e.getMessage(), e);
    }
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
   * version {@code version}, the view's watermark: the words for the log and EXPLAIN REFRESH
   * when it did, {@code null} when the version can still be opened. Every kind needs that
   * version to tell what changed since; each says what it does instead.
   *
   * @throws MaterializedViewException when the version cannot be opened but the source still
   *     has it or older ones: a failure to read, not a cleanup, which no fallback should hide
   */
  public static String removedByCleanup(String viewName, LanceLocation source, long version) {
    String uri = source.uri();
    RuntimeException failure;
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = source.open(a, version)) {
      return null;
    } catch (RuntimeException e) {
      failure = e;
    }
    long oldest;
    boolean listed;
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = source.open(a, null)) {
      List<org.lance.Version> versions = ds.listVersions();
      oldest = versions.stream().mapToLong(org.lance.Version::getId).min().orElse(ds.version());
      // a cleanup may keep a tagged older version: the remaining ones need not be contiguous
      listed = versions.stream().anyMatch(v -> v.getId() == version);
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open the source table of view " + viewName
          + " at '" + uri + "': " + e.getMessage(), e);
    }
    if (listed) {
      throw new MaterializedViewException("Cannot open version " + version + " of the source "
          + "table of view " + viewName + " at '" + uri + "', which the source still has (its "
          + "oldest version is " + oldest + "): " + failure.getMessage(), failure);
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
