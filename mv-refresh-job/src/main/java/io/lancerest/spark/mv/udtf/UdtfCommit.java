package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceIdentity;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.layout.ErrorsTable;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.TaskFailures;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.lance.FragmentMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit phase of a UDTF refresh: the partitions' outcomes become one atomic overwrite of
 * the view (or the refresh's failure), with the skipped partitions staged for the errors
 * table and the new base version recorded.
 */
final class UdtfCommit {
  // The refresh's own log category: these lines are steps of one UDTF refresh.
  private static final Logger LOG = LoggerFactory.getLogger(UdtfRefresh.class);

  private UdtfCommit() {}

  /**
   * Commits the outcomes of every partition as ONE overwrite of the view read at {@code
   * viewVersion}, or throws when a partition failed or too many were skipped.
   */
  static StagedRefresh<UdtfRefreshResult> commit(RefreshContext ctx, ViewTables view,
      UdtfDefinition def, UdtfSource source, String sourceTime, RefreshOptions options,
      long viewVersion, List<PartitionOutcome> outcomes,
      Map<String, PartitionCheckpoints.Checkpoint> finished, PartitionCheckpoints checkpoints) {
    String jobId = ctx.jobId();
    List<FragmentMetadata> fragments = new ArrayList<>();
    List<FragmentMetadata> reusedFragments = new ArrayList<>();
    List<UdtfRefreshResult.SkippedPartition> skipped = new ArrayList<>();
    List<PartitionOutcome> failed = new ArrayList<>();
    long computed = 0;
    long reused = 0;
    long calls = 0;
    for (PartitionOutcome o : outcomes) {
      calls += o.calls();
      switch (o.status()) {
        case DONE -> {
          computed++;
          fragments.addAll(FragmentShipping.fromBytes(o.fragments()));
        }
        case REUSED -> {
          reused++;
          reusedFragments.addAll(
              FragmentShipping.fromBytes(finished.get(o.keyId()).fragments()));
        }
        // The NULL partition is reported as null, not as text a real key 'NULL' could also be.
        case SKIPPED -> skipped.add(new UdtfRefreshResult.SkippedPartition(
            PartitionKeys.NULL_KEY_ID.equals(o.keyId()) ? null : o.keyDisplay(),
            o.calls(), o.errorClass(), o.errorMessage()));
        case FAILED -> failed.add(o);
      }
    }
    long total = outcomes.size();
    MaterializedViewException tooManySkips = null;
    try {
      def.errorHandling().checkSkips(skipped.size(), total, "partitions");
    } catch (MaterializedViewException e) {
      tooManySkips = e;
    }
    if (!failed.isEmpty() || tooManySkips != null) {
      // The refresh commits nothing, so no error is recorded in the errors table; the log is
      // where the skipped partitions of a failed refresh can still be seen.
      for (UdtfRefreshResult.SkippedPartition s : skipped) {
        LOG.warn("View '{}' (job {}) fails; partition {} would have been skipped after {} "
            + "attempt(s): {}: {}", view.viewName(), jobId, s.partitionKey(), s.attempts(),
            s.errorClass(), s.errorMessage());
      }
    }
    if (!failed.isEmpty()) {
      PartitionOutcome f = failed.get(0);
      Long now = currentVersion(view);
      if (now != null && now > viewVersion) {
        // Another refresh of this view committed meanwhile (a DONE one clears the checkpoints
        // this run was writing into): the failure may be a side effect of that, and a rerun
        // starts from the new version.
        throw new io.lancerest.spark.mv.commit.ViewCommitConflictException("View table '"
            + view.viewUri() + "' was modified by another commit after version " + viewVersion
            + " (now " + now + ", a concurrent refresh of view '" + view.viewName() + "') while job "
            + jobId + " ran; partition " + f.keyDisplay() + " then failed: " + f.errorClass()
            + ": " + f.errorMessage() + ". Nothing of this job was committed. Re-run the "
            + "refresh if the view still needs it.", null);
      }
      LOG.warn("View '{}' (job {}) fails at view version {}; its {} finished partitions are "
          + "checkpointed and will be reused by the next refresh", view.viewName(), jobId,
          viewVersion, computed + reused);
      throw new FunctionFailedException(view.viewName(), jobId, UdtfRefresh.function(def),
          "on partition " + f.keyDisplay() + " after " + f.calls() + " attempt(s)",
          f.errorClass() + ": " + f.errorMessage(), null);
    }
    if (tooManySkips != null) {
      UdtfRefreshResult.SkippedPartition first = skipped.get(0);
      throw TaskFailures.tooManySkips(ctx, tooManySkips, "partition " + first.partitionKey(),
          first.errorClass() + ": " + first.errorMessage());
    }
    RefreshResult.JobStatus status = skipped.isEmpty()
        ? RefreshResult.JobStatus.DONE : RefreshResult.JobStatus.PARTIAL;
    String errorsTable = null;
    ErrorsTable.Staged errors = ErrorsTable.Staged.NONE;
    if (!skipped.isEmpty()) {
      errorsTable = view.errorsTableUri();
      List<ErrorsTable.Entry> entries = new ArrayList<>(skipped.size());
      for (UdtfRefreshResult.SkippedPartition s : skipped) {
        entries.add(new ErrorsTable.Entry(null, def.keyColumn(), s.partitionKey(), s.attempts(),
            s.errorClass(), s.errorMessage()));
      }
      try {
        errors = ErrorsTable.stage(view.errors(), new ErrorsTable.Origin(
            jobId, view.viewName(), MaterializedViewKind.UDTF, def.name(), def.version(),
            source.version()), entries);
      } catch (MaterializedViewException e) {
        throw new UdtfRefreshException("Refresh of view '" + view.viewName() + "' (job " + jobId
            + ") failed: " + e.getMessage() + ". The view stays at version " + viewVersion
            + ".", e);
      }
      LOG.warn("View '{}' (job {}): {} of {} partitions skipped after failing; the view is "
          + "PARTIAL, errors go to '{}'", view.viewName(), jobId, skipped.size(), total,
          errorsTable);
    }
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put(UdtfRefresh.BASE_VERSION_KEY, Long.toString(source.version()));
    meta.put(SourceIdentity.KEY, sourceTime); // null (cannot tell) removes a stale one
    meta.put(UdtfRefresh.LAST_JOB_KEY, jobId);
    meta.put(UdtfRefresh.LAST_STATUS_KEY, status.name());
    meta.put(UdtfRefresh.SKIPPED_KEY, Integer.toString(skipped.size()));
    // the names these had before they moved under lancerest::view:: (null removes them)
    for (String legacy : List.of("lancerest::udtf::last_job_id", "lancerest::udtf::last_status",
        "lancerest::udtf::skipped_partitions")) {
      meta.put(legacy, null);
    }
    // A PARTIAL commit keeps the checkpoints (dropped only once DONE): the next refresh at this
    // source version, which tries the skipped partitions again, reuses every other one instead
    // of calling the function for the whole view again (as a chunker retries only its skipped
    // parents). Its commit replaces all rows with the reused fragments plus the new ones, so the
    // view then holds what a refresh from scratch would.
    ViewCommit commit = ViewCommit.builder(view.view(), viewVersion)
        .replaceAllRows()
        .addFragments(fragments)
        .addReusedFragments(reusedFragments)
        .schemaMetadata(meta)
        .job(new ViewCommit.Job(jobId, MaterializedViewKind.UDTF, status, source.version()))
        .build();
    long computedParts = computed;
    long reusedParts = reused;
    long udtfCalls = calls;
    String errorsAt = errorsTable;
    return new StagedRefresh<>(commit, errors, committed -> {
      LOG.info("View '{}' (job {}) {}: version {} from source version {}, {} partitions ({} "
          + "computed, {} reused, {} skipped), {} rows", view.viewName(), jobId, status,
          committed.version(), source.version(), total, computedParts, reusedParts,
          skipped.size(), committed.rowsAdded());
      return new UdtfRefreshResult(jobId, status, source.version(), committed.version(), total,
          computedParts, reusedParts, skipped, udtfCalls, committed.rowsAdded(),
          committed.rowsDeleted(), errorsAt, Duration.ofMillis(ctx.elapsedMillis()));
    }, status == RefreshResult.JobStatus.DONE ? checkpoints::clear : null);
  }

  /**
   * The refresh of a view whose source's commits since its base version changed no row (it was
   * only compacted): the rows and values the UDTF would read are the same, so is its output.
   * One commit without rows records the new base version (and when it was written) and the
   * job.
   */
  static StagedRefresh<UdtfRefreshResult> recordUnchanged(RefreshContext ctx,
      UdtfSource source, ViewTables view, UdtfStart st, SourceHistory history) {
    String jobId = ctx.jobId();
    LOG.info("View '{}' (job {}): {}", view.viewName(), jobId,
        UdtfPlan.unchangedReason(history, st.baseVersion()));
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put(UdtfRefresh.BASE_VERSION_KEY, Long.toString(source.version()));
    meta.put(SourceIdentity.KEY, st.sourceTime());
    meta.put(UdtfRefresh.LAST_JOB_KEY, jobId);
    meta.put(UdtfRefresh.LAST_STATUS_KEY, RefreshResult.JobStatus.DONE.name());
    meta.put(UdtfRefresh.SKIPPED_KEY, "0");
    ViewCommit commit = ViewCommit.builder(view.view(), st.viewVersion())
        .schemaMetadata(meta)
        .job(new ViewCommit.Job(jobId, MaterializedViewKind.UDTF, RefreshResult.JobStatus.DONE,
            source.version()))
        .build();
    return new StagedRefresh<>(commit, null, committed -> new UdtfRefreshResult(jobId,
        RefreshResult.JobStatus.DONE, source.version(), committed.version(), 0, 0, 0, List.of(),
        0, committed.rowsAdded(), committed.rowsDeleted(), null,
        Duration.ofMillis(ctx.elapsedMillis())), null);
  }

  /** The view table's latest version, or null when it cannot be read. */
  private static Long currentVersion(ViewTables view) {
    try (BufferAllocator allocator = new RootAllocator();
        org.lance.Dataset ds = view.view().open(allocator, null)) {
      return ds.version();
    } catch (RuntimeException e) {
      return null;
    }
  }
}
