package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.refresh.RefreshTarget;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.Map;

/**
 * The state of a UDTF view a refresh starts from: its version and rows, the source version it
 * was built from, and what the refresh driver decided about it.
 *
 * @param removed a cleanup removed the base version ({@link
 *     io.lancerest.spark.mv.refresh.RefreshTarget#watermarkRemoved}), or {@code null}
 * @param complete whether the last refresh committed every partition ({@code DONE}, none
 *     skipped)
 * @param sourceWritten {@link RefreshTarget#srcVersionWritten}
 */
record UdtfStart(long viewVersion, long viewRows, String base, String rebuild,
    String removed, boolean complete, String sourceWritten) {
  /**
   * When the source version the refresh goes to was written, as the commit records it (the
   * driver read it: a UDTF view's source is the table the driver opened).
   */
  String sourceTime() {
    return sourceWritten;
  }

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
   * The view's state as the driver read it.
   *
   * @param target what the driver decided: a rebuild, a base version removed by a cleanup
   */
  static UdtfStart of(RefreshTarget target) {
    // the base version as the driver read it (an unreadable one counts as none: rebuilt)
    String base = target.watermark() > 0 ? Long.toString(target.watermark()) : null;
    long viewVersion = target.view().version();
    long viewRows = target.view().rows();
    Map<String, String> viewMeta = target.view().schemaMetadata();
    boolean complete = RefreshResult.JobStatus.DONE.name()
        .equals(viewMeta.get(UdtfRefresh.LAST_STATUS_KEY))
        && "0".equals(viewMeta.get(UdtfRefresh.SKIPPED_KEY));
    return new UdtfStart(viewVersion, viewRows, base, target.rebuild(),
        target.watermarkRemoved(), complete, target.srcVersionWritten());
  }
}
