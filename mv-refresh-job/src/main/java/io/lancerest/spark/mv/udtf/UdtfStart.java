package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.refresh.RefreshTarget;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The state of a UDTF view a refresh starts from: its version and rows, the source version it
 * was built from, and whether the source was replaced since.
 *
 * @param removed a cleanup removed the base version ({@link
 *     io.lancerest.spark.mv.refresh.RefreshTarget#watermarkRemoved}), or {@code null}
 * @param complete whether the last refresh committed every partition ({@code DONE}, none
 *     skipped)
 */
record UdtfStart(long viewVersion, long viewRows, String base, String rebuild,
    String removed, boolean complete) {
  /**
   * Whether the view already reflects the source version. A view the last refresh left PARTIAL
   * is not: its skipped partitions are tried again, as a chunker view's skipped parents are.
   */
  boolean upToDate(UdtfSource source) {
    return rebuild == null && complete && String.valueOf(source.version()).equals(base);
  }

  /** The recorded base version, or {@code null} (none, or unreadable). */
  Long baseVersion() {
    try {
      return base == null ? null : Long.parseLong(base.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * Reads the view's table.
   *
   * @param target what the driver decided: a rebuild, a base version removed by a cleanup
   */
  static UdtfStart read(UdtfSource source, ViewTables view, RefreshTarget target) {
    long viewVersion;
    long viewRows;
    // the base version as the driver read it (an unreadable one counts as none: rebuilt)
    String base = target.watermark() > 0 ? Long.toString(target.watermark()) : null;
    boolean complete;
    Map<String, String> viewMeta;
    try (BufferAllocator allocator = new RootAllocator();
        org.lance.Dataset ds = view.view().open(allocator, null)) {
      viewVersion = ds.version();
      viewRows = ds.countRows();
      viewMeta = ds.getSchema().getCustomMetadata();
      complete = viewMeta != null && RefreshResult.JobStatus.DONE.name()
          .equals(viewMeta.get(UdtfRefresh.LAST_STATUS_KEY))
          && "0".equals(viewMeta.get(UdtfRefresh.SKIPPED_KEY));
    } catch (RuntimeException e) {
      throw new UdtfRefreshException("Cannot open the table of view '" + view.viewName() + "' at '"
          + view.viewUri() + "': " + e.getMessage(), e);
    }
    return new UdtfStart(viewVersion, viewRows, base, target.rebuild(),
        target.watermarkRemoved(), complete);
  }
}
