package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.commit.ViewCommitResult;
import io.lancerest.spark.mv.layout.ErrorsTable;
import java.util.function.Function;

/**
 * A computed refresh, nothing of it committed yet.
 *
 * @param commit the view commit (data, watermark, last job) the driver makes
 * @param errors skipped work items, written and appended to the errors table only once the view
 *     commit succeeded ({@link ErrorsTable.Staged#NONE} when none)
 * @param result the kind's result for the committed view version
 * @param afterCommit clean-up once committed (e.g. resume checkpoints no longer needed); a
 *     failure there is logged, never the refresh's
 */
public record StagedRefresh<R>(ViewCommit commit, ErrorsTable.Staged errors,
    Function<ViewCommitResult, R> result, Runnable afterCommit) {
  public StagedRefresh {
    errors = errors == null ? ErrorsTable.Staged.NONE : errors;
    afterCommit = afterCommit == null ? () -> { } : afterCommit;
  }
}
