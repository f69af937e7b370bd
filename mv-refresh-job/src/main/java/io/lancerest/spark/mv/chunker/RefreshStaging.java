package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceIdentity;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.ErrorsTable;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.TaskFailures;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Computes a prepared chunker refresh's change: expands the parents, finds the view rows to
 * delete, cuts at {@code output_limit}, and stages the one commit with the new processed set.
 */
final class RefreshStaging {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkerRefresh.class);

  private RefreshStaging() {}

  static StagedRefresh<ChunkerRefreshResult> compute(PreparedRefresh p) {
    ChunkerRun run = p.run;
    ViewTables t = run.t();
    RefreshOptions o = run.o();
    String jobId = run.jobId();
    long srcVersion = p.srcVersion;
    SourceState state = p.state;
    Roaring64NavigableMap toExpand = state.toExpand;
    Roaring64NavigableMap deleteParents = p.deleteParents;
    boolean force = p.rebuild();
    if (p.watermarkRemoved != null) {
      LOG.warn("Chunker view {} (job {}): {}", t.viewName(), jobId, p.watermarkRemovedReason());
    } else if (p.stateLost != null) {
      LOG.warn("Chunker view {} (job {}): {}", t.viewName(), jobId, p.stateLostReason());
    }
    long t0 = System.nanoTime() - p.scanMillis * 1_000_000;
    long scanned = System.nanoTime();

    // 3. expansion, on the driver or on executors
    Expansion ex = ParentExpander.expand(p);
    try {
      run.def().errorHandling().checkSkips(ex.skipped.size(), toExpand.getLongCardinality(),
          "parents");
    } catch (MaterializedViewException e) {
      ChunkerRefreshResult.SkippedParent first = ex.skipped.get(0);
      throw TaskFailures.tooManySkips(run.ctx(), e, "source row id " + first.sourceRowId(),
          first.errorClass() + ": " + first.errorMessage());
    }
    long expanded = System.nanoTime();

    // 4. rows to delete, and the output_limit cut
    ExistingRows existing = force ? new ExistingRows()
        : ExistingRows.read(run, p.readVersion, deleteParents, o.outputLimit() != null);
    Roaring64NavigableMap newTruncated = ParentIds.empty();
    if (o.outputLimit() != null) {
      ex = OutputLimitCut.apply(o.outputLimit(), ex, existing, p.source,
          new ParentExpander(run, p.layout, p.viewTable), t, newTruncated);
    }

    // 5. the new processed set; skipped and truncated parents stay unprocessed
    Roaring64NavigableMap nextProcessed = ParentIds.minus(p.processed, deleteParents);
    for (long sid : ex.counts.keySet()) {
      nextProcessed.addLong(sid);
    }
    nextProcessed.andNot(newTruncated);
    // Every parent left unprocessed was tried by this refresh (the previously skipped ones are
    // retried), so the skipped set is this refresh's skips.
    Roaring64NavigableMap nextSkipped = ParentIds.empty();
    for (ChunkerRefreshResult.SkippedParent s : ex.skipped) {
      nextSkipped.addLong(s.sourceRowId());
    }
    nextSkipped.andNot(newTruncated);
    // Filtered parents of the scanned fragments (and the skipped parents retried) left
    // unprocessed; the fragments not scanned have none (they were skipped only when the last
    // refresh left none, or only the skipped ones, retried here).
    long unprocessed = ParentIds.minus(state.present, nextProcessed).getLongCardinality();
    long viewScanned = System.nanoTime();

    // Skipped parents are written before the commit and appended after it (ErrorsTable).
    ErrorsTable.Staged errors = ChunkerErrorsTable.stage(t.errors(), jobId, t.viewName(),
        run.def().function(), srcVersion, ex.skipped);
    // Last before the commit: a file written for it is removed when it does not land.
    ParentState.Staged parents = ParentState.stage(t.viewName(), t.view(), p.parents.pointer,
        srcVersion, nextProcessed, newTruncated, nextSkipped, unprocessed);
    ViewCommit.Builder commitBuilder = ViewCommit.builder(t.view(), p.readVersion)
        .deleteRowAddresses(existing.deleteAddresses)
        .addFragments(ex.fragments, ex.ranges.size() == ex.fragments.size() ? ex.ranges
            : null)
        .fieldMetadata(ChunkerLayout.SOURCE_ROW_ID,
            Map.of(ChunkerRefresh.WATERMARK_KEY, String.valueOf(srcVersion)))
        .schemaMetadata(Map.of(ChunkerRefresh.BASE_TABLE_VERSION_KEY, String.valueOf(srcVersion),
            SourceIdentity.KEY, p.srcVersionTime))
        .config(parents.config())
        .sideFolders(parents.written(), parents.released())
        .job(new ViewCommit.Job(jobId, MaterializedViewKind.CHUNKER, ex.skipped.isEmpty()
            ? RefreshResult.JobStatus.DONE : RefreshResult.JobStatus.PARTIAL, srcVersion));
    if (force) {
      commitBuilder.replaceAllRows();
    }
    ViewCommit commit = commitBuilder.build();
    Expansion done = ex;
    long watermark = p.watermark;
    Roaring64NavigableMap gone = state.gone;
    return new StagedRefresh<>(commit, errors, r -> {
      long zero = done.counts.values().stream().filter(c -> c == 0).count();
      ChunkerRefreshResult result = new ChunkerRefreshResult(done.skipped.isEmpty()
          ? RefreshResult.JobStatus.DONE : RefreshResult.JobStatus.PARTIAL, srcVersion,
          watermark, r.version(), done.counts.size() + done.skipped.size(), zero,
          gone.getLongCardinality(), r.rowsAdded(), r.rowsDeleted(), r.fragmentsAdded(),
          done.skipped, run.ctx().elapsedMillis());
      LOG.info("Chunker view {} (job {}): {}; source scan {} ms, expansion {} ms, view scan "
          + "{} ms ({}), commit {} ms", t.viewName(), jobId, result,
          ChunkerRun.ms(t0, scanned), ChunkerRun.ms(scanned, expanded),
          ChunkerRun.ms(expanded, viewScanned), existing.found,
          ChunkerRun.ms(viewScanned, System.nanoTime()));
      return result;
    }, ChunkerRefresh.legacyKeysIn(p.config).isEmpty() ? null
        : () -> dropLegacyKeys(run, p.config));
  }

  /**
   * Removes the state under its old names once the new ones are committed, so that an older
   * engine never reads a stale processed set (one more, metadata-only view commit, once).
   */
  private static void dropLegacyKeys(ChunkerRun run, Map<String, String> config) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset view = run.t().view().open(a, null)) {
      view.deleteConfigKeys(ChunkerRefresh.legacyKeysIn(config));
    }
  }
}
