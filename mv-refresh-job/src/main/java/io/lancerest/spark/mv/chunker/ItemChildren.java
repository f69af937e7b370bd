package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.rowindex.SourceIdCollector;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The children of one chunker work item, encoded as Arrow batches and held until the item is
 * done, with their {@code __source_row_id}s in order: a failed parent's output can then still
 * be dropped before anything reaches a writer.
 */
final class ItemChildren implements AutoCloseable {
  final List<ArrowRecordBatch> batches = new ArrayList<>();
  private long[] sids = new long[1024];
  private int size;
  /** Encoded bytes held. */
  long bytes;
  /** Whether every child of the item is here (not cut off at the buffer's cap). */
  boolean complete;

  /** Takes the batch {@code root} holds now (its buffers stay with the batch). */
  void add(VectorSchemaRoot root) {
    BigIntVector ids = (BigIntVector) root.getVector(0);
    for (int i = 0; i < root.getRowCount(); i++) {
      if (size == sids.length) {
        sids = Arrays.copyOf(sids, size * 2);
      }
      sids[size++] = ids.get(i);
    }
    ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch();
    batches.add(batch);
    bytes += batch.computeBodyLength();
  }

  /** Adds the children's source ids, in order, to {@code ids}. */
  void sourceIdsTo(SourceIdCollector ids) {
    for (int i = 0; i < size; i++) {
      ids.add(sids[i]);
    }
  }

  @Override
  public void close() {
    batches.forEach(ArrowRecordBatch::close);
    batches.clear();
  }

  static void closeQuietly(ArrowReader r) {
    try {
      r.close();
    } catch (Exception ignored) {
      // its vectors only
    }
  }

  /**
   * What lance-core reads when a work item is written on its own: the batches already held,
   * then the rest of the item's stream, with their source ids collected for the fragments'
   * ranges and indexes.
   */
  static final class Stream extends ArrowReader {
    private final ArrayDeque<ArrowRecordBatch> first = new ArrayDeque<>();
    private final ArrowReader rest;
    private final SourceIdCollector ids;
    long rows;

    Stream(BufferAllocator a, ItemChildren first, ArrowReader rest, SourceIdCollector ids) {
      super(a);
      if (first != null) {
        this.first.addAll(first.batches);
        first.batches.clear();
      }
      this.rest = rest;
      this.ids = ids;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      ArrowRecordBatch next = first.poll();
      if (next == null) {
        if (!rest.loadNextBatch()) {
          return false;
        }
        next = new VectorUnloader(rest.getVectorSchemaRoot()).getRecordBatch();
      }
      try (ArrowRecordBatch b = next) {
        VectorSchemaRoot root = getVectorSchemaRoot();
        new VectorLoader(root).load(b);
        BigIntVector sids = (BigIntVector) root.getVector(0);
        for (int i = 0; i < root.getRowCount(); i++) {
          ids.add(sids.get(i));
        }
        rows += root.getRowCount();
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() throws IOException {
      first.forEach(ArrowRecordBatch::close);
      first.clear();
      rest.close();
    }

    @Override
    protected Schema readSchema() throws IOException {
      return rest.getVectorSchemaRoot().getSchema();
    }
  }
}
