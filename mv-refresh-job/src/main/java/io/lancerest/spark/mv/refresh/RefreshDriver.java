package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.commit.ViewCommitConflictException;
import io.lancerest.spark.mv.commit.ViewCommitException;
import io.lancerest.spark.mv.commit.ViewCommitNotAppliedException;
import io.lancerest.spark.mv.commit.ViewCommitResult;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.RefreshCancelledException;
import io.lancerest.spark.mv.maintenance.ViewMaintenance;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
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
   * @param maxRowsPerFragment the refresh's fragment size bound, which maintenance keeps too
   * @param latestSourceVersion the source's latest version (it opens the source)
   */
  public static <R> R refresh(RefreshContext ctx, ViewTables tables, Long srcVersion,
      boolean force, Integer maxRowsPerFragment, ViewRefresh<R> kind) {
    String[] caller = jobProperties(ctx.spark().sparkContext());
    JobTracker job = ctx.job();
    ViewCommitResult committed = null;
    String note = null;
    try {
      ctx.begin();
      job.started(kind.kind(), null);
      for (int n = 1; ; n++) {
        // Decided and opened for each attempt: a conflict means another refresh committed,
        // possibly at a newer source version, and "latest" must not fall behind the view's
        // watermark.
        try (AttemptDatasets open = new AttemptDatasets(ctx.viewName(), tables)) {
          TargetRules.Decided target = TargetRules.decide(ctx, tables, open, srcVersion, force);
          long version = target.target().srcVersion();
          if (n == 1) {
            job.started(kind.kind(), version);
          }
          ViewRefresh.Attempt<R> attempt = kind.prepare(ctx, target.target());
          if (attempt.upToDate()) {
            LOG.info("View {} (job {}): already at source version {}; nothing to do",
                ctx.viewName(), ctx.jobId(), version);
            // nothing to commit: an interrupted commit's indexes are registered all the same
            String owed = ViewCommit.registerOwedIndexes(tables.view(),
                open.view(target.target().view().version()));
            if (owed != null) {
              LOG.info("View {} (job {}): indexes: {}", ctx.viewName(), ctx.jobId(), owed);
            }
            return ended(job, kind, attempt.skipped(), owed == null ? null : "indexes: " + owed);
          }
          note = target.note();
          StagedRefresh<R> staged = attempt.compute();
          try {
            ctx.describe("commit");
            // The last moment a cancel can stop the refresh: once committing, it lands.
            Runnable lastStep = () -> {
              ctx.listener().beforeCommit();
              ctx.checkCancelled();
            };
            committed = staged.commit().commitData(open.view(target.target().view().version()),
                lastStep);
          } catch (ViewCommitConflictException e) {
            open.commitFailed();
            staged.errors().abandon(e.toString());
            staged.commit().abandon(); // computed again from the new version, new fragments
            if (n >= COMMIT_ATTEMPTS) {
              throw new MaterializedViewException("Refresh of view " + ctx.viewName() + " (job "
                  + ctx.jobId() + ") gave up after " + n + " attempts: the view kept changing while it "
                  + "ran (" + e.getMessage() + "). Nothing of "
                  + "this job was committed; run the refresh again", e);
            }
            LOG.info("View {} (job {}): {}; computing the refresh again (attempt {} of {})",
                ctx.viewName(), ctx.jobId(), e.getMessage(), n + 1, COMMIT_ATTEMPTS);
            continue;
          } catch (ViewCommitException e) {
            open.commitFailed();
            staged.errors().abandon(e.toString());
            if (e instanceof ViewCommitNotAppliedException) {
              staged.commit().abandon(); // known not to have landed
            }
            // Only a commit known not to have landed is safe to run again as it is.
            throw new MaterializedViewException("Refresh of view " + ctx.viewName() + " (job "
                + ctx.jobId() + ") could not commit: " + e.getMessage().replaceAll("\\.$", "")
                + (e instanceof ViewCommitNotAppliedException ? ". Run the refresh again" : ""),
                e);
          } catch (Exception | Error e) { // lance-core's IOException arrives undeclared
            open.commitFailed();
            staged.errors().abandon(e.toString());
            if (e instanceof Exception) {
              // ViewCommit reports every failure after lance-core was asked to commit as a
              // ViewCommitException: this one came before, so nothing landed (a cancel, a
              // check, the view not opened)
              staged.commit().abandon();
            }
            throw e;
          }
          LOG.info("View {} (job {}): committed view version {} ({} rows added, {} deleted)",
              ctx.viewName(), ctx.jobId(), committed.version(), committed.rowsAdded(),
              committed.rowsDeleted());
          staged.errors().commit();
          try {
            staged.afterCommit().run();
          } catch (Exception e) { // lance-core's IOException arrives undeclared
            LOG.warn("View {} (job {}): committed view version {}; clean-up after the commit "
                + "failed (the refresh stands): {}", ctx.viewName(), ctx.jobId(),
                committed.version(), e.toString());
          }
          // after the error rows and the clean-up: index work can take minutes (a retrain),
          // and a driver killed in it leaves the indexes owed to the view's next commit
          ctx.describe("indexes");
          committed = staged.commit().carryIndexes(committed);
          String indexes = committed.indexSummary();
          if (indexes != null) {
            LOG.info("View {} (job {}): indexes: {}", ctx.viewName(), ctx.jobId(), indexes);
            note = join(note, "indexes: " + indexes);
          }
          R result = staged.result().apply(committed);
          return ended(job, kind, result, join(note, maintain(ctx, tables, open,
              committed.latestVersion(), maxRowsPerFragment)));
        }
      }
    } catch (Exception | Error e) { // lance-core's IOException arrives undeclared
      Throwable t = recordEnd(ctx, committed, kind.function(), e);
      if (t instanceof Error err) {
        throw err;
      }
      throw RefreshDriver.<RuntimeException>unchanged(t);
    } finally {
      restoreJobProperties(ctx.spark().sparkContext(), caller);
    }
  }

  /**
   * Throws {@code t} as it is: a checked exception that arrives undeclared (Spark's
   * AnalysisException, lance-core's IOException) keeps its type for the callers that classify
   * it ({@code KindDispatch}).
   */
  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T unchanged(Throwable t) throws T {
    throw (T) t;
  }

  private static String join(String a, String b) {
    return a == null ? b : b == null ? a : a + "; " + b;
  }

  private static <R> R ended(JobTracker job, ViewRefresh<R> kind, R result, String note) {
    ViewRefresh.Outcome o = kind.outcome(result);
    job.finished(o.status(), o.sourceVersion(), o.rowsInserted(), o.rowsDeleted(), o.skipped(),
        note);
    return result;
  }

  /**
   * The view's maintenance after its commit, never inside it: compaction and removal of old
   * versions by the session's policy and the view's overrides ({@link ViewMaintenance}), from
   * the version the attempt committed. It never fails the refresh; what it did, or its failure,
   * is the job's message.
   */
  private static String maintain(RefreshContext ctx, ViewTables tables, AttemptDatasets open,
      long committedVersion, Integer maxRowsPerFragment) {
    try {
      ctx.describe("maintenance");
      ViewMaintenance.Outcome o = ViewMaintenance.run(tables.view(),
          open.committedView(committedVersion), ViewMaintenance.Policy.session(ctx.spark()),
          tables.viewProperties(), false, maxRowsPerFragment);
      String summary = o == null ? null : o.summary();
      if (summary != null) {
        LOG.info("View {} (job {}): maintenance: {}", ctx.viewName(), ctx.jobId(), summary);
        return "maintenance: " + summary;
      }
      return null;
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      String why = JobTracker.redact(e.getClass().getSimpleName() + ": " + e.getMessage());
      LOG.warn("View {} (job {}): maintenance after the commit failed (the refresh stands): {}",
          ctx.viewName(), ctx.jobId(), why);
      return "maintenance failed (the refresh stands): " + why;
    }
  }

  /**
   * Records how a refresh that threw ended, and returns what to throw. A failure after the view
   * commit does not undo it: the job is recorded DONE, as the view's last job says.
   */
  private static Throwable recordEnd(RefreshContext ctx, ViewCommitResult committed,
      String function, Throwable e) {
    JobTracker job = ctx.job();
    if (committed != null) {
      job.finished(RefreshResult.JobStatus.DONE, null, committed.rowsAdded(),
          committed.rowsDeleted(), 0, "committed view version " + committed.version()
              + ", then failed: " + JobTracker.message(e));
      return e;
    }
    if (e instanceof RefreshCancelledException c) {
      job.cancelled(c.getMessage());
      return e;
    }
    if (job.cancelRequested() || cancelledJobs(e, ctx)) {
      RefreshCancelledException c = ctx.cancelled(e);
      job.cancelled(c.getMessage());
      return c;
    }
    Throwable failure = TaskFailures.of(ctx, function, e);
    job.failed(failure);
    return failure;
  }

  /** Whether {@code e} is Spark's failure of a job cancelled by the refresh's tag. */
  private static boolean cancelledJobs(Throwable e, RefreshContext ctx) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = t.getMessage();
      if (m != null && java.util.regex.Pattern.compile("cancelled job tag "
          + java.util.regex.Pattern.quote(ctx.jobTag()) + "(\\s|$)").matcher(m).find()) {
        return true;
      }
    }
    return false;
  }

  /** What {@link #refresh} would do now, with nothing written or committed. */
  public static <R> RefreshPlan explain(RefreshContext ctx, ViewTables tables, Long srcVersion,
      boolean force, ViewRefresh<R> kind) {
    String[] caller = jobProperties(ctx.spark().sparkContext());
    try {
      ctx.begin();
      ctx.describe("explain");
      try (AttemptDatasets open = new AttemptDatasets(ctx.viewName(), tables)) {
        RefreshTarget target = TargetRules.decide(ctx, tables, open, srcVersion, force).target();
        RefreshPlan plan = kind.prepare(ctx, target).explain();
        return plan.withIndexes(ViewCommit.indexPlan(open.view(target.view().version()),
            plan.mode() == RefreshPlan.Mode.FULL, plan.mode() == RefreshPlan.Mode.NO_OP));
      }
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
