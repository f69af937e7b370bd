package io.lancerest.spark.computed;

import java.util.List;

/** Runs a backfill's fragment tasks: in Spark tasks, or here one after another. */
@FunctionalInterface
public interface FragmentRunner {
  List<FragmentResult> run(BackfillTaskSpec spec, List<FragmentTask> tasks);

  /** In this JVM, one fragment after another, with one instance of the function. */
  static FragmentRunner local() {
    return FragmentBackfill::runAll;
  }
}
