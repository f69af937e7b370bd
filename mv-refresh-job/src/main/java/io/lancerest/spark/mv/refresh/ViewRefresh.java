package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult.JobStatus;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * What one view kind does inside the refresh sequence of {@link RefreshDriver}. The driver
 * owns the sequence and its rules (job id, Spark job group, source version, commit, conflict
 * retry); a kind reads its state, decides, and computes its change, one {@link Attempt} at a
 * time (a commit conflict makes the driver prepare a new one).
 *
 * @param <R> the kind's result
 */
public interface ViewRefresh<R> {
  MaterializedViewKind kind();

  /**
   * What computes the view's rows, with its class ({@code chunker 'Splitter'
   * (com.example.Splitter)}): a failure of it reads the same for every kind ({@link
   * TaskFailures}).
   */
  String function();

  /** What the job log records of a result of this kind. */
  Outcome outcome(R result);

  /** A result as the job log records it. */
  record Outcome(JobStatus status, Long sourceVersion, long rowsInserted, long rowsDeleted,
      long skipped) {}

  /**
   * Plans one attempt: reads what the kind needs of the view and the source at {@code
   * target.srcVersion()} and decides what to recompute, with nothing written. The driver has
   * applied the rules every kind shares ({@link RefreshTarget}); when {@code target} says to
   * rebuild, the kind computes every row of the view again and its commit replaces them all.
   */
  Attempt<R> prepare(RefreshContext ctx, RefreshTarget target);

  /** One attempt, prepared. */
  interface Attempt<R> {
    /** Whether the view already reflects the source version and nothing forces a rebuild. */
    boolean upToDate();

    /** The result of an up-to-date refresh (status SKIPPED; nothing committed). */
    R skipped();

    /** What {@link #compute} would do, with nothing written (EXPLAIN REFRESH). */
    RefreshPlan explain();

    /** Computes the change and stages it: nothing is committed until the driver commits. */
    StagedRefresh<R> compute();
  }

  static <R> ViewRefresh<R> of(MaterializedViewKind kind, String function,
      Function<R, Outcome> outcome, BiFunction<RefreshContext, RefreshTarget, Attempt<R>> prepare) {
    return new ViewRefresh<R>() {
      @Override
      public MaterializedViewKind kind() {
        return kind;
      }

      @Override
      public String function() {
        return function;
      }

      @Override
      public Outcome outcome(R result) {
        return outcome.apply(result);
      }

      @Override
      public Attempt<R> prepare(RefreshContext ctx, RefreshTarget target) {
        return prepare.apply(ctx, target);
      }
    };
  }
}
