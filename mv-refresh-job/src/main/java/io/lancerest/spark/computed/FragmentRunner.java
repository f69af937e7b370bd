package io.lancerest.spark.computed;

import java.util.ArrayList;
import java.util.List;

/** Runs a backfill's fragment tasks: in Spark tasks, or here one after another. */
@FunctionalInterface
public interface FragmentRunner {
  List<FragmentResult> run(BackfillTaskSpec spec, List<FragmentTask> tasks);

  /** In this JVM, one fragment after another. */
  static FragmentRunner local() {
    return (spec, tasks) -> {
      List<FragmentResult> out = new ArrayList<>();
      for (FragmentTask t : tasks) {
        out.add(FragmentBackfill.run(spec, t));
      }
      return out;
    };
  }
}
