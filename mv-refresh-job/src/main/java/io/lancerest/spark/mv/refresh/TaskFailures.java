package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.spark.SparkException;

/**
 * The one reading of a failure that came out of a refresh's computation, for every kind: which
 * error is the user's, and what the refresh reports. Spark wraps what a task threw (a job
 * abort, a failed UDF call), so the error a user can act on is the first one inside those
 * wrappers.
 */
public final class TaskFailures {
  private TaskFailures() {}

  /**
   * {@code e} as the refresh reports it: a function failure ({@link FunctionFailedException},
   * thrown in a task or on the driver) named with the refresh's view and job; an engine error
   * thrown in a task ({@link MaterializedViewException}) as it was raised; any other failure of
   * a Spark job as a failure of {@code function} in a Spark task; everything else unchanged.
   *
   * @param function what computes the view's rows, with its class (as {@link
   *     ViewRefresh#function})
   */
  public static Throwable of(RefreshContext ctx, String function, Throwable e) {
    boolean sparkJob = false;
    for (Throwable c = e; c != null; c = next(c)) {
      if (c instanceof FunctionFailedException f) {
        return f.named() ? f : f.named(ctx.viewName(), ctx.jobId());
      }
      if (c instanceof MaterializedViewException m) {
        return c == e || sparkJob ? m : e;
      }
      sparkJob |= c instanceof SparkException;
    }
    if (!sparkJob) {
      return e;
    }
    return new FunctionFailedException(ctx.viewName(), ctx.jobId(), function,
        "in a Spark task", firstCause(e), e);
  }

  /**
   * The refresh's failure when more work items were skipped than {@code error_handling} allows
   * ({@code limit}, from {@link io.lancerest.spark.mv.definition.ErrorHandling#checkSkips}),
   * in one shape for every kind: the view, the job, the limit, and the first skipped item.
   *
   * @param firstItem the first skipped work item ({@code source row id 7}, {@code partition c})
   * @param firstError its error, {@code class: message}
   */
  public static MaterializedViewException tooManySkips(RefreshContext ctx,
      MaterializedViewException limit, String firstItem, String firstError) {
    return new MaterializedViewException("Refresh of view " + ctx.viewName() + " (job "
        + ctx.jobId() + ") failed: " + limit.getMessage() + ". First skipped: " + firstItem
        + ": " + firstError, limit);
  }

  /**
   * The first error of {@code e}'s chain that is not a wrapper (a Spark job's failure, a
   * reflective call's or a future's), as {@code class: message}.
   */
  public static String firstCause(Throwable e) {
    Throwable c = e;
    while (wrapper(c) && next(c) != null) {
      c = next(c);
    }
    return c.getClass().getName() + ": " + c.getMessage();
  }

  private static boolean wrapper(Throwable t) {
    return t instanceof SparkException || t instanceof ExecutionException
        || t instanceof CompletionException || t instanceof InvocationTargetException
        || t instanceof UndeclaredThrowableException;
  }

  private static Throwable next(Throwable t) {
    return t.getCause() == t ? null : t.getCause();
  }
}
