package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.lance.FragmentMetadata;

/** Children written by the tasks of a refresh, not committed yet. */
final class Expansion {
  final List<FragmentMetadata> fragments = new ArrayList<>();
  /** Each fragment's source id range and whether it is indexed ({@code null}: unknown). */
  final List<FragmentSourceRanges.Range> ranges = new ArrayList<>();
  /** Children written, by parent expanded. */
  final Map<Long, Integer> counts = new HashMap<>();
  final List<ChunkerRefreshResult.SkippedParent> skipped = new ArrayList<>();

  /** What the tasks wrote, expanded and skipped, together. */
  static Expansion of(List<TaskOutput> outs) {
    Expansion ex = new Expansion();
    for (TaskOutput out : outs) {
      for (byte[] f : out.fragments) {
        ex.fragments.addAll(FragmentShipping.fromBytes(f));
      }
      ex.ranges.addAll(out.ranges);
      for (int i = 0; i < out.parentCount; i++) {
        ex.counts.put(out.parents[i], out.childCounts[i]);
      }
      ex.skipped.addAll(out.skipped);
    }
    return ex;
  }
}
