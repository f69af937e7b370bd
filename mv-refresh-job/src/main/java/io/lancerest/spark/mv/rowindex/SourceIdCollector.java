package io.lancerest.spark.mv.rowindex;

import io.lancerest.spark.connector.LanceLocation;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.FragmentMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code __source_row_id}s of the rows a writer streams to lance-core, in stream order (8
 * bytes a row), and, once lance-core has cut them into fragments, each fragment's range and
 * index. lance-core fills the fragments in stream order (it starts the next file when one is
 * full), so fragment {@code k} holds the rows after those of fragments {@code 0..k-1}.
 */
public final class SourceIdCollector {
  private static final Logger LOG = LoggerFactory.getLogger(SourceIdCollector.class);
  /** Ids are kept in chunks of this many, so that growing never copies them. */
  private static final int CHUNK = 1 << 16;
  private final List<long[]> chunks = new ArrayList<>();
  private long[] current;
  private int pos = CHUNK;
  private long size;
  private boolean nulls;

  public void add(long id) {
    if (pos == CHUNK) {
      current = new long[CHUNK];
      chunks.add(current);
      pos = 0;
    }
    current[pos++] = id;
    size++;
  }

  private long get(long i) {
    return chunks.get((int) (i >>> 16))[(int) (i & (CHUNK - 1))];
  }

  /** A row without a source row id: no fragment then gets a range or an index. */
  public void addNull() {
    nulls = true;
  }

  /**
   * The range of each fragment of {@code written}, which hold the {@code count} rows streamed,
   * with its {@link SourceIdIndex} written ({@link SourceIdIndexFiles}) when its ids never
   * decrease. When the fragments' row counts do not add up to the rows streamed, every fragment
   * gets the range of all rows, which holds whatever they contain, and no index; after a row
   * without an id, no fragment gets either.
   */
  public List<FragmentSourceRanges.Range> ranges(LanceLocation view, BufferAllocator allocator, List<FragmentMetadata> written, long count) {
    List<FragmentSourceRanges.Range> ranges = new ArrayList<>(written.size());
    long physical = 0;
    for (FragmentMetadata f : written) {
      physical += f.getPhysicalRows();
    }
    if (nulls || size != count) {
      written.forEach(f -> ranges.add(null));
      return ranges;
    }
    if (physical != count) {
      FragmentSourceRanges.Range all = size == 0 ? null : range(0, size, false);
      written.forEach(f -> ranges.add(all));
      return ranges;
    }
    long start = 0;
    for (FragmentMetadata f : written) {
      long end = start + f.getPhysicalRows();
      if (end == start) {
        ranges.add(null);
        continue;
      }
      SourceIdIndex.Builder b = new SourceIdIndex.Builder();
      for (long i = start; i < end && b.add(get(i)); i++) {
        // add() answers false once the ids cannot be indexed
      }
      SourceIdIndex index = b.build();
      long[] minMax = b.range();
      boolean indexed = false;
      if (index != null) {
        try {
          indexed = SourceIdIndexFiles.write(view, allocator, f, index);
        } catch (IOException e) {
          // without its index the fragment is read when a refresh looks rows up in it
          LOG.warn("Fragment {} of {} is written without its source id index: {}",
              f.getFiles().get(0).getPath(), view.uri(), e.getMessage());
        }
      }
      ranges.add(minMax != null ? new FragmentSourceRanges.Range(minMax[0], minMax[1], indexed)
          : range(start, end, false));
      start = end;
    }
    return ranges;
  }

  private FragmentSourceRanges.Range range(long from, long to, boolean indexed) {
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (long i = from; i < to; i++) {
      long v = get(i);
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    return new FragmentSourceRanges.Range(min, max, indexed);
  }
}
