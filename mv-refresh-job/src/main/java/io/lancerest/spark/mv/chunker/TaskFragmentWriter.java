package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.commit.StreamingFragmentWriter;
import io.lancerest.spark.mv.rowindex.SourceIdCollector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.FragmentMetadata;

/**
 * The one fragment writer of a chunker task: the children of each work item, once the item is
 * done ({@link ItemChildren}), go into the same few large fragments, which lance-core writes on
 * a thread of its own while the next item is chunked; each fragment gets its source id range
 * and index.
 */
final class TaskFragmentWriter implements AutoCloseable {
  /**
   * Encoded child batches the writer may hold: the next work item is chunked while lance-core
   * writes the last one. Under a task memory cap, fewer: at most an eighth of the cap.
   */
  static final int QUEUED_BATCHES = 8;

  /** Batches the writer may hold under a task Arrow memory cap of {@code capBytes}. */
  static int queuedBatches(long capBytes) {
    return (int) Math.max(1, Math.min(QUEUED_BATCHES,
        capBytes / 8 / ChunkerTask.MAX_BATCH_BYTES));
  }

  private final LanceLocation view;
  private final BufferAllocator allocator;
  private final StreamingFragmentWriter writer;
  private final SourceIdCollector ids = new SourceIdCollector();
  private long rows;
  private boolean finished;

  /** @param capBytes the task's Arrow memory cap ({@code Long.MAX_VALUE}: none) */
  TaskFragmentWriter(String viewUri, Map<String, String> storage, BufferAllocator allocator,
      Schema schema, int maxRowsPerFragment, long capBytes) {
    this.view = LanceLocation.of(viewUri, storage);
    this.allocator = allocator;
    this.writer = new StreamingFragmentWriter(view, allocator, schema,
        maxRowsPerFragment, queuedBatches(capBytes));
  }

  /** Hands a done work item's children to lance-core (the batches are then its own). */
  void add(ItemChildren item) {
    item.sourceIdsTo(ids);
    List<ArrowRecordBatch> batches = new ArrayList<>(item.batches);
    item.batches.clear();
    int handed = 0;
    try {
      while (handed < batches.size()) {
        ArrowRecordBatch b = batches.get(handed++);
        rows += b.getLength();
        if (!writer.put(b)) {
          return; // lance-core stopped reading: its failure comes from finish
        }
      }
    } finally {
      // what was not handed over (lance-core stopped, or the task was interrupted) is freed
      batches.subList(handed, batches.size()).forEach(ArrowRecordBatch::close);
    }
  }

  /** Ends the stream; the task's fragments, with their ranges, go to {@code out}. */
  void finish(TaskOutput out) {
    finished = true;
    List<FragmentMetadata> written = nonEmpty(writer.finish(null));
    out.addFragments(written, ids.ranges(view, allocator, written, rows));
  }

  @Override
  public void close() {
    if (!finished) {
      writer.finish(new IllegalStateException("the chunker task failed"));
    }
    writer.close();
  }

  static List<FragmentMetadata> nonEmpty(List<FragmentMetadata> written) {
    List<FragmentMetadata> out = new ArrayList<>();
    for (FragmentMetadata f : written) {
      if (f.getPhysicalRows() > 0) {
        out.add(f);
      }
    }
    return out;
  }
}
