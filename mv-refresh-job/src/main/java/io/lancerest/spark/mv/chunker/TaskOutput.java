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
  /**
   * The source id range (and whether its index was written) of each fragment, in the order of
   * {@link #fragments} unpacked; {@code null} entries when unknown.
   */
  final List<io.lancerest.spark.mv.rowindex.FragmentSourceRanges.Range> ranges =
      new ArrayList<>();
  long[] parents = new long[16];
  int[] childCounts = new int[16];
  int parentCount;
  long rows;
  /** The most child rows one of its batches buffered before writing them. */
  long maxBufferedRows;
  final List<ChunkerRefreshResult.SkippedParent> skipped = new ArrayList<>();

  void addFragments(List<org.lance.FragmentMetadata> written,
      List<io.lancerest.spark.mv.rowindex.FragmentSourceRanges.Range> writtenRanges) {
    if (!written.isEmpty()) {
      fragments.add(io.lancerest.spark.mv.commit.FragmentShipping.toBytes(written));
      ranges.addAll(writtenRanges);
    }
  }

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
