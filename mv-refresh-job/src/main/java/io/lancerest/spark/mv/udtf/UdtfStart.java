package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.SourceIdentity;
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
record UdtfStart(long viewVersion, long viewRows, String base, String replaced,
    boolean complete) {
  boolean upToDate(RefreshOptions options, UdtfSource source) {
    return !options.force() && replaced == null && String.valueOf(source.version())
        .equals(base);
  }

  /** The recorded base version, or {@code null} (none, or unreadable). */
  Long baseVersion() {
    try {
      return base == null ? null : Long.parseLong(base.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Reads the view's table and the source's identity at the recorded base version. */
  static UdtfStart read(UdtfSource source, ViewTables view) {
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
    // A UDTF view is rebuilt in full, so a source replaced under the same name (versions restart
    // at 1) needs no refusal, only no skip: at the recorded version number it is another table.
    // The source's latest version is not known here (source.version() may be an older
    // src_version), so a base version the source does not have is taken as cleaned up, not as
    // a replacement: only a version that exists with another write time counts.
    String replaced = null;
    try {
      replaced = base == null ? null : SourceIdentity.replaced(view.viewName(), source.table(), viewMeta, Long.parseLong(base.trim()), Long.MAX_VALUE);
    } catch (NumberFormatException e) {
      // unreadable base version: never equal to the source's, so the view is rebuilt anyway
    }
    return new UdtfStart(viewVersion, viewRows, base, replaced, complete);
  }
}
