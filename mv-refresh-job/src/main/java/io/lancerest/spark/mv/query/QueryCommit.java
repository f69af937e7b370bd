package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.List;
import java.util.Map;

/**
 * The commit phase: stages a refresh's one {@link ViewCommit} (deletions, new fragments,
 * watermark, base table version, last job) and the result it reports once committed.
 */
final class QueryCommit {
  private QueryCommit() {}

  /**
   * The commit on top of the view version {@code s} read, to source version {@code
   * s.srcVersion}.
   *
   * @param w the new fragments; their source row id ranges are recorded for {@link
   *     FragmentDiffRead#viewRowsOf}
   * @param deletes addresses of the view rows to delete
   * @param replaceAll the commit replaces every row of the view
   * @param phases the refresh's phase times, for its log line
   */
  static StagedRefresh<RefreshResult> stage(RefreshContext ctx, ViewTables t, RefreshStart s,
      WrittenFragments w, List<Long> deletes, boolean replaceAll, String phases) {
    long srcVersion = s.srcVersion;
    String jobId = ctx.jobId();
    long t3 = System.currentTimeMillis();
    ViewCommit.Builder commit = ViewCommit.builder(t.view(), s.readVersion)
        .deleteRowAddresses(deletes)
        .addFragments(w.fragments(), w.ranges())
        .fieldMetadata(GenevaLayout.SOURCE_ROW_ID,
            Map.of(GenevaLayout.WATERMARK, String.valueOf(srcVersion)))
        .schemaMetadata(Map.of(GenevaLayout.BASE_TABLE_VERSION, String.valueOf(srcVersion),
            QueryRefresh.SOURCE_VERSION_TIME, s.srcVersionTime))
        .job(new ViewCommit.Job(jobId, MaterializedViewKind.QUERY,
            RefreshResult.JobStatus.DONE, srcVersion));
    if (replaceAll) {
      commit.replaceAllRows();
    }
    return new StagedRefresh<>(commit.build(), null, r -> {
      LOG.info("View {} (job {}): phases: {}, commit {} ms", t.viewName(), jobId, phases,
          System.currentTimeMillis() - t3);
      RefreshResult result = new RefreshResult(jobId, RefreshResult.JobStatus.DONE,
          MaterializedViewKind.QUERY, srcVersion, r.rowsAdded(), r.rowsDeleted(), 0,
          ctx.elapsedMillis());
      LOG.info("View {} (job {}): committed view version {}: {} rows inserted, {} deleted, "
          + "source version {}, {} ms", t.viewName(), jobId, r.version(), r.rowsAdded(),
          r.rowsDeleted(), srcVersion, result.durationMs());
      return result;
    }, null);
  }
}
