package io.lancerest.spark.computed;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Fragments split into shares of about equal rows, one share per parallel task. */
public final class FragmentShares {
  private FragmentShares() {}

  /**
   * At most {@code shares} non-empty lists covering {@code tasks}: the largest fragment first,
   * each into the share with the fewest rows so far, so that one large fragment is not queued
   * behind others while a task idles.
   */
  public static List<List<FragmentTask>> split(List<FragmentTask> tasks, int shares) {
    int n = Math.min(shares, tasks.size());
    List<List<FragmentTask>> out = new ArrayList<>();
    long[] rows = new long[n];
    for (int i = 0; i < n; i++) {
      out.add(new ArrayList<>());
    }
    List<FragmentTask> bySize = new ArrayList<>(tasks);
    bySize.sort(Comparator.comparingLong(FragmentTask::physicalRows).reversed()
        .thenComparingInt(FragmentTask::fragmentId));
    for (FragmentTask t : bySize) {
      int least = 0;
      for (int i = 1; i < n; i++) {
        if (rows[i] < rows[least]) {
          least = i;
        }
      }
      out.get(least).add(t);
      rows[least] += t.physicalRows();
    }
    return out;
  }
}
