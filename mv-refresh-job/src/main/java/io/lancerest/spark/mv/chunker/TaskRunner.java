package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.rowindex.SourceIdCollector;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.lance.FragmentMetadata;

/**
 * Runs the work items of one chunker task, made on the executor from the shipped {@link
 * ChunkerTask}: it holds the task's resources (function instances, allocator, thread pool) and
 * writes each item's children, again from scratch when a failure calls for it.
 *
 * <p>Memory: parents of one work item are held (the batch form needs them; the row form needs
 * them to re-run after a failure), children are not. The chunker's iterator is drained into
 * Arrow batches of at most {@code min(max_rows_per_fragment, 4096)} rows (and about 16 MiB) that
 * lance-core pulls through the C stream interface and writes as they come, so a parent with any
 * fan-out runs in bounded memory.
 */
final class TaskRunner implements AutoCloseable {
  /** The most child rows one batch buffered (lance-core's writer thread pulls the batches). */
  final AtomicLong maxBuffered = new AtomicLong();
  final ErrorHandling errors;
  final Schema viewSchema;
  final ChunkerCalls calls;
  final ChildEncoder encoder;
  final BufferAllocator allocator;
  /** Threads calling the chunker ahead ({@code null}: the task's own thread only). */
  final ExecutorService pool;
  final int intraConcurrency;
  final int batchRows;
  final HashMap<Long, Integer> caps;
  final ChunkerTask.Guard guard;
  private final String viewName;
  private final String viewUri;
  private final HashMap<String, String> storageOptions;
  private final LanceLocation view;
  private final int maxRowsPerFragment;
  private final long itemBufferBytes;

  TaskRunner(ChunkerTask task, ChunkerTask.Guard guard) throws java.io.IOException {
    this.guard = guard;
    this.viewName = task.viewName;
    this.viewUri = task.viewUri;
    this.storageOptions = task.storageOptions;
    this.view = LanceLocation.of(viewUri, storageOptions);
    this.maxRowsPerFragment = task.maxRowsPerFragment;
    this.intraConcurrency = task.intraConcurrency;
    this.caps = task.caps;
    this.batchRows = Math.max(1, Math.min(task.maxRowsPerFragment, ChunkerTask.MAX_BATCH_ROWS));
    this.itemBufferBytes = Math.min(ChunkerTask.ITEM_BUFFER_BYTES, task.arrowMemoryLimit / 4);
    FunctionEnvelope function = FunctionEnvelope.fromJson(task.envelope);
    this.errors = ErrorHandling.fromJson(task.errorHandlingJson);
    this.viewSchema = Schema.fromJSON(task.viewSchemaJson);
    this.calls = new ChunkerCalls(viewName, function,
        (StructType) DataType.fromJson(task.inputSchemaJson), task.inputPositions);
    this.encoder = new ChildEncoder(viewName, viewSchema, function, task.inheritedPositions);
    this.allocator = new RootAllocator(task.arrowMemoryLimit);
    AtomicInteger n = new AtomicInteger();
    this.pool = intraConcurrency <= 1 ? null : Executors.newFixedThreadPool(intraConcurrency,
        r -> {
          Thread t = new Thread(r, "chunker-" + function.name() + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  /**
   * Runs one work item. Its children are kept as encoded batches until the item is done (a
   * failed parent's output can then still be dropped), and handed to the task's writer; an
   * item whose children outgrow {@link ChunkerTask#ITEM_BUFFER_BYTES} is written as fragments
   * of its own, streamed as the chunker emits them.
   */
  void runItem(List<Row> parents, TaskOutput out, TaskFragmentWriter writer) {
    // ascending parents write ascending source ids: the fragments can then be indexed
    parents.sort(java.util.Comparator.comparingLong(r -> r.getLong(0)));
    ItemState st = new ItemState();
    while (true) {
      List<Row> live = new ArrayList<>();
      for (Row p : parents) {
        if (!st.skipped.containsKey(p.getLong(0))) {
          live.add(p);
        }
      }
      if (live.isEmpty()) {
        out.skipped.addAll(st.skipped.values());
        return;
      }
      ItemStream s = new ItemStream(this, allocator, parents,
          WorkUnit.of(live, calls.function.batch(), intraConcurrency, st.split), st);
      if (!st.ownFragments) {
        ItemChildren b = buffer(s);
        if (b == null) {
          continue; // restart the work item
        }
        if (b.complete) {
          writer.add(b);
          finishItem(live, s, st, out);
          return;
        }
        // too large to hold: written on its own, starting with what was buffered
        st.ownFragments = true;
        if (!writeOwn(b, s, out)) {
          continue;
        }
        finishItem(live, s, st, out);
        return;
      }
      if (!writeOwn(null, s, out)) {
        continue;
      }
      finishItem(live, s, st, out);
      return;
    }
  }

  private void finishItem(List<Row> live, ItemStream s, ItemState st, TaskOutput out) {
    for (Row p : live) {
      long sid = p.getLong(0);
      if (!st.skipped.containsKey(sid)) {
        out.addParent(sid, s.counts.getOrDefault(sid, 0));
      }
    }
    out.skipped.addAll(st.skipped.values());
  }

  /**
   * The item's children as encoded batches, or {@code null} when the item must run again (a
   * failed parent's output was in an earlier batch); incomplete when they outgrew the buffer.
   */
  private ItemChildren buffer(ItemStream s) {
    ItemChildren b = new ItemChildren();
    try {
      while (s.loadNextBatch()) {
        b.add(s.getVectorSchemaRoot());
        if (b.bytes > itemBufferBytes) {
          return b; // the stream goes on, written on its own (writeOwn)
        }
      }
      b.complete = true;
      s.cancelPrefetch();
      s.close();
      return b;
    } catch (ItemStream.RestartItem e) {
      abandon(b, s);
      return null;
    } catch (RuntimeException | Error e) {
      abandon(b, s);
      throw e;
    } catch (java.io.IOException e) {
      abandon(b, s);
      throw new java.io.UncheckedIOException(e);
    }
  }

  private void abandon(ItemChildren b, ItemStream s) {
    b.close();
    s.cancelPrefetch();
    ItemChildren.closeQuietly(s);
  }

  /**
   * Writes the item's children, those {@code first} buffered then the rest of {@code s}, as
   * fragments of their own; {@code false} when the item must run again.
   */
  private boolean writeOwn(ItemChildren first, ItemStream s, TaskOutput out) {
    SourceIdCollector ids = new SourceIdCollector();
    ItemChildren.Stream collecting = new ItemChildren.Stream(allocator, first, s, ids);
    List<FragmentMetadata> written;
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      try {
        Data.exportArrayStream(allocator, collecting, stream);
      } catch (RuntimeException e) {
        ItemChildren.closeQuietly(collecting); // not handed to lance-core: freed here
        throw e;
      }
      written = view.fragments().datasetUri(viewUri)
          .allocator(allocator).data(stream).maxRowsPerFile(maxRowsPerFragment).execute();
    } catch (RuntimeException e) {
      Throwable f = s.failure;
      if (f instanceof ItemStream.RestartItem) {
        return false;
      }
      if (f instanceof RuntimeException re) {
        throw re;
      }
      if (f instanceof Error err) {
        throw err;
      }
      throw new ChunkerRefreshException("Writing children of view '" + viewName
          + "' failed: " + e.getMessage(), f == null ? e : f);
    } finally {
      s.cancelPrefetch();
      if (first != null) {
        first.close();
      }
    }
    List<FragmentMetadata> nonEmpty = TaskFragmentWriter.nonEmpty(written);
    out.addFragments(nonEmpty, ids.ranges(view, allocator, nonEmpty,
        collecting.rows));
    return true;
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.shutdownNow();
    }
    try {
      calls.close();
    } finally {
      allocator.close();
    }
  }
}
