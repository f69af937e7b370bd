package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.InvalidOptionException;
import io.lancerest.spark.mv.MaterializedViewException;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.lance.ReadOptions;

/** The {@code src_version} rules, the same for every kind. */
public final class SourceVersions {
  private SourceVersions() {}

  /** The latest version of the source table at {@code uri}. */
  public static long latest(String viewName, String uri, Map<String, String> storageOptions) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(a, uri, new ReadOptions.Builder()
            .setStorageOptions(storageOptions == null ? Map.of() : storageOptions).build())) {
      return ds.latestVersion();
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open the source table of view " + viewName
          + " at '" + uri + "': " + e.getMessage(), e);
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

  /** A view is never refreshed to a source version older than the one it reflects. */
  public static void requireForward(String viewName, long srcVersion, long watermark) {
    if (srcVersion < watermark) {
      throw new InvalidOptionException("src_version " + srcVersion + " is older than the "
          + "version view " + viewName + " already reflects (" + watermark + "); a view cannot "
          + "be refreshed backwards. Omit src_version or give " + watermark + " or later");
    }
  }
}
