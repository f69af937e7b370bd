package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The state of a UDTF view a refresh starts from: its version and rows, the source version it
 * was built from, and whether the source was replaced since.
 *
 * @param complete whether the last refresh committed every partition ({@code DONE}, none
 *     skipped)
 */
record UdtfStart(long viewVersion, long viewRows, String base, String rebuild,
    boolean complete) {
  boolean upToDate(UdtfSource source) {
    return rebuild == null && String.valueOf(source.version()).equals(base);
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
   * @param rebuild why the driver has the view rebuilt ({@link
   *     io.lancerest.spark.mv.refresh.RefreshTarget#rebuild}), or {@code null}
   */
  static UdtfStart read(UdtfSource source, ViewTables view, String rebuild) {
    long viewVersion;
    long viewRows;
    String base;
    boolean complete;
    Map<String, String> viewMeta;
    try (BufferAllocator allocator = new RootAllocator();
        org.lance.Dataset ds = view.view().open(allocator, null)) {
      viewVersion = ds.version();
      viewRows = ds.countRows();
      viewMeta = ds.getSchema().getCustomMetadata();
      base = viewMeta == null ? null : viewMeta.get(UdtfRefresh.BASE_VERSION_KEY);
      complete = viewMeta != null && RefreshResult.JobStatus.DONE.name()
          .equals(viewMeta.get(UdtfRefresh.LAST_STATUS_KEY))
          && "0".equals(viewMeta.get(UdtfRefresh.SKIPPED_KEY));
    } catch (RuntimeException e) {
      throw new UdtfRefreshException("Cannot open the table of view '" + view.viewName() + "' at '"
          + view.viewUri() + "': " + e.getMessage(), e);
    }
    return new UdtfStart(viewVersion, viewRows, base, rebuild, complete);
  }
}
