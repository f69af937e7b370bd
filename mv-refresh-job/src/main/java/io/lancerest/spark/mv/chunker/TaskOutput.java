package io.lancerest.spark.mv.chunker;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * What one Spark task of a chunker refresh sends to the driver: the fragments it wrote
 * (serialised {@code FragmentMetadata}), the parents it expanded with their child counts, and
 * the parents it skipped.
 */
final class TaskOutput implements Serializable {
  private static final long serialVersionUID = 1L;

  final List<byte[]> fragments = new ArrayList<>();
  long[] parents = new long[16];
  int[] childCounts = new int[16];
  int parentCount;
  long rows;
  /** The most child rows one of its batches buffered before writing them. */
  long maxBufferedRows;
  final List<ChunkerRefreshResult.SkippedParent> skipped = new ArrayList<>();

  void addParent(long sid, int children) {
    if (parentCount == parents.length) {
      parents = java.util.Arrays.copyOf(parents, parentCount * 2);
      childCounts = java.util.Arrays.copyOf(childCounts, parentCount * 2);
    }
    parents[parentCount] = sid;
    childCounts[parentCount++] = children;
    rows += children;
  }
}
