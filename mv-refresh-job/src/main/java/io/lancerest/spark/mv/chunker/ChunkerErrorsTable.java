package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.layout.ErrorsTable;
import java.util.ArrayList;
import java.util.List;

/**
 * Skipped parents of a chunker refresh, as entries of the view's {@link ErrorsTable} (one row
 * per skipped parent, {@code __source_row_id} set). Staged before the view commit and appended
 * after it; see {@link ErrorsTable} for why.
 */
final class ChunkerErrorsTable {
  private ChunkerErrorsTable() {}

  static ErrorsTable.Staged stage(LanceLocation table, String jobId,
      String view, FunctionEnvelope function, long sourceVersion,
      List<ChunkerRefreshResult.SkippedParent> skipped) {
    List<ErrorsTable.Entry> entries = new ArrayList<>(skipped.size());
    for (ChunkerRefreshResult.SkippedParent s : skipped) {
      entries.add(new ErrorsTable.Entry(s.sourceRowId(), null, null, s.attempts(),
          s.errorClass(), s.errorMessage()));
    }
    return ErrorsTable.stage(table, new ErrorsTable.Origin(jobId, view,
        MaterializedViewKind.CHUNKER, function.name(), function.version(), sourceVersion),
        entries);
  }
}
