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
   * thrown in a task ({@link MaterializedViewException}) as it was raised; a Spark job failed by
   * the definition's own expressions (a UDF, {@code raise_error}, ANSI arithmetic) as a failure
   * of {@code function} in a Spark task, and such an error Spark raised evaluating them on the
   * driver as one "on the driver"; any other failure of a Spark job as an engine error naming
   * its first cause; everything else unchanged.
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
      // Spark evaluates the definition's expressions on the driver too, without a job: its
      // optimizer folds a projection of a local input (an aggregate refresh's change rows,
      // collected to the driver) while it plans. An analysis error is not an evaluation.
      return userError(e) && !analysis(e) && inChain(e, TaskFailures::planning)
          ? new FunctionFailedException(ctx.viewName(), ctx.jobId(), function, "on the driver",
              firstCause(e), e) : e;
    }
    if (userError(e)) {
      return new FunctionFailedException(ctx.viewName(), ctx.jobId(), function,
          "in a Spark task", firstCause(e), e);
    }
    // Not the user's code: a write to storage, a lost executor, a job cancelled by someone
    // else. Blaming the function would send the user to the wrong place.
    return new MaterializedViewException("Refresh of view " + ctx.viewName() + " (job "
        + ctx.jobId() + ") failed in a Spark task: " + firstCause(e) + ". Nothing was "
        + "committed; the view is unchanged", e);
  }

  /**
   * Error classes Spark gives an error of the definition's own expressions: a UDF that threw,
   * {@code raise_error}, and arithmetic or casts that fail under ANSI mode.
   */
  private static final java.util.List<String> USER_ERROR_CLASSES = java.util.List.of(
      "FAILED_EXECUTE_UDF", "USER_RAISED_EXCEPTION", "DIVIDE_BY_ZERO", "ARITHMETIC_OVERFLOW",
      "CAST_INVALID_INPUT", "CAST_OVERFLOW", "NUMERIC_VALUE_OUT_OF_RANGE",
      "INVALID_ARRAY_INDEX", "INVALID_INDEX_OF_ZERO");

  /**
   * Whether {@code e}'s chain holds an error Spark raised for the definition's expressions: one
   * of {@link #USER_ERROR_CLASSES}, or an error thrown while Spark evaluated an expression
   * (generated or interpreted: {@code raise_error} and a UDF's own exception come out so)
   * before any frame of this engine or of Lance.
   */
  private static boolean userError(Throwable e) {
    // out of memory or stack, an interrupt: where it struck says nothing of whose fault it is
    if (inChain(e, c -> c instanceof VirtualMachineError || c instanceof InterruptedException
        || c instanceof java.nio.channels.ClosedByInterruptException)) {
      return false;
    }
    for (Throwable c = e; c != null; c = next(c)) {
      if (c instanceof org.apache.spark.SparkThrowable t && t.getErrorClass() != null) {
        String cls = t.getErrorClass();
        for (String u : USER_ERROR_CLASSES) {
          if (cls.equals(u) || cls.startsWith(u + ".")) {
            return true;
          }
        }
      }
      if (!wrapper(c) && thrownEvaluating(c)) {
        return true;
      }
    }
    return false;
  }

  private static boolean analysis(Throwable e) {
    return inChain(e, c -> c instanceof org.apache.spark.sql.AnalysisException);
  }

  private static boolean inChain(Throwable e, java.util.function.Predicate<Throwable> p) {
    for (Throwable c = e; c != null; c = next(c)) {
      if (p.test(c)) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code c} was thrown while Spark's optimizer planned (it folds local inputs). */
  private static boolean planning(Throwable c) {
    for (StackTraceElement f : c.getStackTrace()) {
      if (f.getClassName().startsWith("org.apache.spark.sql.catalyst.optimizer.")) {
        return true;
      }
    }
    return false;
  }

  private static boolean thrownEvaluating(Throwable c) {
    for (StackTraceElement f : c.getStackTrace()) {
      String cls = f.getClassName();
      if (cls.startsWith("io.lancerest.") || cls.startsWith("org.lance.")) {
        return false;
      }
      if (cls.startsWith("org.apache.spark.sql.catalyst.expressions.")) {
        return true;
      }
    }
    return false;
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
