package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.definition.SourceIdentity;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rules every kind shares before it plans an attempt, applied once by {@link RefreshDriver}:
 * which source version, what the view reflects, whether the source is still the table the view
 * was refreshed from, and whether the view is rebuilt ({@link RefreshTarget}).
 */
final class TargetRules {
  // the driver's log category: these lines are steps of the refresh sequence
  private static final Logger LOG = LoggerFactory.getLogger(RefreshDriver.class);

  private TargetRules() {}

  /**
   * A target and, when the source was replaced or a cleanup removed the watermark version, why
   * the view is rebuilt: the job's message, secrets masked ({@link JobTracker#redact}).
   */
  record Decided(RefreshTarget target, String note) {}

  /**
   * The rules every kind shares, before the kind reads anything: the source version ({@code
   * src_version} or the latest, which must exist), whether the source is still the table the
   * view was refreshed from, and that the view never goes back to an older version of it. A
   * replaced source is rebuilt in full from the new table, whatever its versions: the old
   * watermark means nothing to it, so the backwards rule does not apply either.
   */
  static Decided decide(RefreshContext ctx, ViewTables t, AttemptDatasets open, Long srcVersion,
      boolean force) {
    String name = ctx.viewName();
    // The view first, then the source: a watermark committed before the view was read is a
    // source version that existed then, so the source's latest read after it is never older.
    // Read the other way round, another refresh committing in between would leave a watermark
    // past the latest read, taken below for a replaced source (rebuilt at the older version).
    // A refresh committing after the view was read makes this attempt's commit conflict.
    ViewRead view = ViewRead.of(name, open.view());
    long watermark = view.watermark(name);
    org.lance.Dataset src = SourceVersions.target(name, open, srcVersion);
    long version = src.version();
    long latest = srcVersion == null ? version : src.latestVersion();
    String written = SourceIdentity.versionTime(src);
    // One read of the watermark version serves both checks below (null: not there to open).
    org.lance.Dataset then = watermark == 0 || watermark > latest ? null
        : watermark == version ? src : open.sourceIfOpenable(watermark);
    String atWatermark = then == null ? null : SourceIdentity.versionTime(then);
    String why = SourceIdentity.replaced(name, t.source(), view.schemaMetadata(), watermark,
        latest, atWatermark);
    if (why != null) {
      // the words quote the source's location, which may carry a credential (a signed URL)
      why = JobTracker.redact(why);
      LOG.warn("View {} (job {}): {}; rebuilding it in full from source version {}",
          name, ctx.jobId(), why, version);
      return new Decided(new RefreshTarget(version, watermark,
          RefreshTarget.SOURCE_REPLACED, null, view, written, open),
          RefreshTarget.SOURCE_REPLACED + " (" + why + ")");
    }
    SourceVersions.requireForward(name, version, watermark);
    // Every kind needs the watermark version to tell what changed since; without it each
    // rebuilds. A version the source still lists but that cannot be opened fails the refresh.
    String removed = watermark > 0 && version != watermark && !force && atWatermark == null
        ? SourceVersions.removedByCleanup(name, t.sourceUri(), src, watermark,
            open.whyUnopenable(watermark)) : null;
    if (removed != null) {
      LOG.warn("View {} (job {}): {}; rebuilding it from source version {}", name,
          ctx.jobId(), removed, version);
    }
    return new Decided(new RefreshTarget(version, watermark, force ? RefreshTarget.FORCE
        : null, removed, view, written, open), removed);
  }
}
