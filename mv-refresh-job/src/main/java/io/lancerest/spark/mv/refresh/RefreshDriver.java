package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.MaterializedViewException;
import io.lancerest.spark.mv.RefreshPlan;
import io.lancerest.spark.mv.commit.ViewCommitConflictException;
import io.lancerest.spark.mv.commit.ViewCommitResult;
import java.util.function.LongSupplier;
import org.apache.spark.SparkContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The refresh sequence, once for every kind:
 * <ol>
 *   <li>the refresh's Spark jobs: tagged with its job id, described with the view's name, in
 *       the caller's job group (or one named by the job id); the caller's put back at the end,
 *       whatever happens;</li>
 *   <li>the source version: {@code src_version} or the latest (read again by each attempt),
 *       which must exist ({@link SourceVersions});</li>
 *   <li>the kind reads the view and the source and decides ({@link ViewRefresh#prepare}); a
 *       view already at that version is SKIPPED with nothing committed;</li>
 *   <li>the kind computes its change, staged ({@link ViewRefresh.Attempt#compute});</li>
 *   <li>one view commit, read at the view version the attempt started from; then the staged
 *       errors table rows. A concurrent commit to the view makes the attempt start again from
 *       the new view version, up to {@value #COMMIT_ATTEMPTS} attempts.</li>
 * </ol>
 * A failure anywhere before the commit leaves the view as it was.
 */
public final class RefreshDriver {
  private static final Logger LOG = LoggerFactory.getLogger(RefreshDriver.class);
  /** Attempts of a refresh whose view commit keeps meeting other commits. */
  public static final int COMMIT_ATTEMPTS = 3;
  /** The Spark local properties of a job group: id, description, interrupt on cancel. */
  private static final String[] JOB_PROPERTIES = {"spark.jobGroup.id", "spark.job.description",
      "spark.job.interruptOnCancel", "spark.job.tags"};

  private RefreshDriver() {}

  /**
   * Refreshes the view.
   *
   * @param latestSourceVersion the source's latest version (it opens the source)
   */
  public static <R> R refresh(RefreshContext ctx, Long srcVersion,
      LongSupplier latestSourceVersion, ViewRefresh<R> kind) {
    String[] caller = jobProperties(ctx.spark().sparkContext());
    try {
      ctx.begin();
      for (int n = 1; ; n++) {
        // Resolved for each attempt: a conflict means another refresh committed, possibly at a
        // newer source version, and "latest" must not fall behind the view's watermark.
        long version = SourceVersions.resolve(ctx.viewName(), srcVersion,
            latestSourceVersion.getAsLong());
        ViewRefresh.Attempt<R> attempt = kind.prepare(ctx, version);
        if (attempt.upToDate()) {
          LOG.info("View {} (job {}): already at source version {}; nothing to do",
              ctx.viewName(), ctx.jobId(), version);
          return attempt.skipped();
        }
        StagedRefresh<R> staged = attempt.compute();
        ViewCommitResult committed;
        try {
          ctx.describe("commit");
          committed = staged.commit().commit(ctx.listener()::beforeCommit);
        } catch (ViewCommitConflictException e) {
          staged.errors().abandon(e.toString());
          if (n >= COMMIT_ATTEMPTS) {
            throw new MaterializedViewException("Refresh of view " + ctx.viewName() + " (job "
                + ctx.jobId() + ") gave up after " + n + " attempts: other writers kept "
                + "committing to the view while it ran (" + e.getMessage() + "). Nothing of "
                + "this job was committed; run the refresh again", e);
          }
          LOG.info("View {} (job {}): concurrent commit to the view; computing the refresh "
              + "again (attempt {} of {})", ctx.viewName(), ctx.jobId(), n + 1,
              COMMIT_ATTEMPTS);
          continue;
        } catch (RuntimeException | Error e) {
          staged.errors().abandon(e.toString());
          throw e;
        }
        LOG.info("View {} (job {}): committed view version {} ({} rows added, {} deleted)",
            ctx.viewName(), ctx.jobId(), committed.version(), committed.rowsAdded(),
            committed.rowsDeleted());
        staged.errors().commit();
        try {
          staged.afterCommit().run();
        } catch (RuntimeException e) {
          LOG.warn("View {} (job {}): committed view version {}; clean-up after the commit "
              + "failed (the refresh stands): {}", ctx.viewName(), ctx.jobId(),
              committed.version(), e.toString());
        }
        return staged.result().apply(committed);
      }
    } finally {
      restoreJobProperties(ctx.spark().sparkContext(), caller);
    }
  }

  /** What {@link #refresh} would do now, with nothing written or committed. */
  public static <R> RefreshPlan explain(RefreshContext ctx, Long srcVersion,
      LongSupplier latestSourceVersion, ViewRefresh<R> kind) {
    String[] caller = jobProperties(ctx.spark().sparkContext());
    try {
      ctx.begin();
      ctx.describe("explain");
      long version = SourceVersions.resolve(ctx.viewName(), srcVersion,
          latestSourceVersion.getAsLong());
      return kind.prepare(ctx, version).explain();
    } finally {
      restoreJobProperties(ctx.spark().sparkContext(), caller);
    }
  }

  private static String[] jobProperties(SparkContext sc) {
    String[] v = new String[JOB_PROPERTIES.length];
    for (int i = 0; i < v.length; i++) {
      v[i] = sc.getLocalProperty(JOB_PROPERTIES[i]);
    }
    return v;
  }

  /**
   * Puts the caller's job group back: the caller's later jobs stay in the caller's group, which
   * cancelling it still reaches.
   */
  private static void restoreJobProperties(SparkContext sc, String[] v) {
    for (int i = 0; i < v.length; i++) {
      sc.setLocalProperty(JOB_PROPERTIES[i], v[i]);
    }
  }
}
