package io.lancerest.spark.mv.query;


import io.lancerest.spark.connector.ScanBatchRows;
import io.lancerest.spark.mv.definition.SourceIdentity;
import io.lancerest.spark.mv.fragments.FragmentDiff;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.refresh.AttemptDatasets;
import io.lancerest.spark.mv.refresh.RefreshTarget;
import io.lancerest.spark.mv.refresh.SourceVersions;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.FragmentMetadata;

/**
 * What a refresh reads of the view and its source before it decides anything; the same for
 * REFRESH and EXPLAIN.
 */
final class RefreshStart {
  /** The source and view as the driver opened them for this attempt (lent, never closed here). */
  final AttemptDatasets datasets;
  /** The view version this refresh reads, and will commit on top of. */
  final long readVersion;
  final Schema viewArrow;
  final long viewRows;
  final long watermark;
  final long srcVersion;
  final int sourceFragments;
  /** The source's fragments at {@link #srcVersion}, listed once for the whole refresh. */
  final List<FragmentMetadata> sourceAt;
  /** Rows a batch of a Spark read of the whole source, as the catalog reads it. */
  final int sourceBatchRows;
  final long sourceRows;
  /** When the source version this refresh goes to was written ({@link SourceIdentity}). */
  final String srcVersionTime;
  /** The view's Arrow schema without metadata: the schema new view fragments are written in. */
  final Schema plain;
  final StructType target;
  /** Why every row is computed again ({@link RefreshTarget#rebuild}), or {@code null}. */
  final String rebuild;
  final boolean replaceAll;
  /**
   * Why the view is rebuilt although it has a watermark: a cleanup removed that version of
   * the source ({@link SourceVersions#removedByCleanup}); {@code null} otherwise.
   */
  final String watermarkRemoved;

  /** Reads the view and the source at the version the driver chose. */
  RefreshStart(ViewTables t, RefreshTarget to) {
    long srcVersion = to.srcVersion();
    // 1. the view at the version this refresh reads, and will commit on top of
    readVersion = to.view().version();
    viewArrow = to.view().schema();
    viewRows = to.view().rows();
    requireQueryTable(viewArrow, t.viewName());
    watermark = to.watermark();
    rebuild = to.rebuild();
    // Without the watermark version (removed by a cleanup) neither the fragments nor the
    // history since can be compared, and the update versions of rows a compaction moved may be
    // wrong (SourceHistory): only a rebuild is sure to be right.
    watermarkRemoved = to.watermarkRemoved();
    this.srcVersion = srcVersion;
    // 2. the source at the version the driver chose, as the driver opened it
    datasets = to.datasets();
    org.lance.Dataset ds = datasets.source(srcVersion);
    sourceAt = FragmentDiff.metadata(ds.getFragments());
    sourceBatchRows = ScanBatchRows.forDataset(ds);
    requireStableRowIds(sourceAt, t.viewName(), srcVersion);
    srcVersionTime = to.srcVersionWritten();
    sourceFragments = sourceAt.size();
    sourceRows = ds.countRows();
    plain = withoutMetadata(viewArrow);
    target = LanceArrowUtils.fromArrowSchema(plain);
    replaceAll = rebuild != null || viewRows == 0 || watermarkRemoved != null;
  }

  /** Whether the view already reflects the source version (and nothing forces a rebuild). */
  boolean upToDate() {
    return srcVersion == watermark && rebuild == null;
  }

  /** The result of a refresh that found the view up to date (nothing committed). */
  io.lancerest.spark.mv.result.RefreshResult skipped(
      io.lancerest.spark.mv.refresh.RefreshContext ctx) {
    return new io.lancerest.spark.mv.result.RefreshResult(ctx.jobId(),
        io.lancerest.spark.mv.result.RefreshResult.JobStatus.SKIPPED,
        io.lancerest.spark.mv.definition.MaterializedViewKind.QUERY, srcVersion, 0, 0, 0,
        ctx.elapsedMillis());
  }

  /** The reason of a rebuild when the watermark version is gone, for the log and EXPLAIN. */
  String watermarkRemovedReason() {
    return watermarkRemoved + "; what changed since then cannot be told, so the view is "
        + "rebuilt from source version " + srcVersion;
  }

  /** Why a refresh rebuilds the view, in the words of its log line. */
  String rebuildReason() {
    if (rebuild != null) {
      return rebuild;
    }
    if (watermarkRemoved != null) {
      return "source version " + watermark + ", its watermark, was removed by a cleanup";
    }
    if (viewRows == 0) {
      return watermark == 0 ? "first refresh" : "the view is empty";
    }
    return "the source's history cannot tell which rows changed in place";
  }

  /** Why a view is rebuilt when the source's history {@code h} has gaps. */
  String unknownHistoryReason(SourceHistory h) {
    return "the source's history since version " + watermark + " cannot tell which rows "
        + "changed in place (" + h.unknown() + "), so the view is rebuilt from source version "
        + srcVersion;
  }

  /**
   * The source's history since the watermark, for the row scan ({@link RowIdScans#source}):
   * the rows changed in place that their update versions may not show ({@link
   * SourceHistory}); {@code null} for a rebuild or a view without a watermark.
   */
  SourceHistory rowScanHistory() {
    if (replaceAll || watermark == 0) {
      return null;
    }
    return SourceHistory.after(datasets.source(srcVersion), watermark);
  }

  /** Source versions must have stable row ids, or {@code __source_row_id} means nothing. */
  static void requireStableRowIds(List<FragmentMetadata> fragments, String viewName,
      long version) {
    // every fragment of a dataset shares the setting: one is enough
    if (!fragments.isEmpty() && fragments.get(0).getRowIdMeta() == null) {
      throw new QueryRefreshException(StableRowIds.missingMessage(viewName, version));
    }
  }

  static Schema withoutMetadata(Schema s) {
    List<Field> fields = new ArrayList<>();
    for (Field f : s.getFields()) {
      fields.add(new Field(f.getName(), new FieldType(f.isNullable(), f.getType(),
          f.getDictionary()), f.getChildren()));
    }
    return new Schema(fields);
  }

  private static void requireQueryTable(Schema view, String viewName) {
    try {
      view.findField(GenevaLayout.SOURCE_ROW_ID);
    } catch (IllegalArgumentException e) {
      throw new QueryRefreshException("Table of view " + viewName + " has no "
          + GenevaLayout.SOURCE_ROW_ID + " column; it is not a query view table");
    }
  }

}
