package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.FragmentMetadata;

/**
 * One stream of encoded Arrow batches into new, uncommitted fragments: the caller's thread
 * encodes batches and hands them over ({@link #put}), lance-core writes them on a thread of its
 * own, at most {@value #QUEUED_BATCHES} batch behind, so encoding and writing overlap (as in
 * lance-spark's own writer). lance-core fills the fragments in stream order and starts the next
 * one when a fragment has {@code maxRowsPerFile} rows. Nothing is written before the first
 * batch; {@link #finish} ends the stream and returns what was written.
 */
public final class StreamingFragmentWriter implements AutoCloseable {
  /**
   * By default at most this many encoded batches wait for lance-core: with the one being encoded
   * and the one lance-core holds, three batches of a writer are in memory at once.
   */
  static final int QUEUED_BATCHES = 1;

  private final LanceLocation table;
  private final String uri;
  private final BufferAllocator allocator;
  private final int maxRowsPerFile;
  private final BatchQueue queue;
  private ExecutorService thread;
  private Future<List<FragmentMetadata>> written;
  private boolean ended;

  public StreamingFragmentWriter(LanceLocation table, BufferAllocator allocator, Schema schema,
      int maxRowsPerFile) {
    this(table, allocator, schema, maxRowsPerFile, QUEUED_BATCHES);
  }

  /**
   * @param queuedBatches batches that may wait for lance-core: more lets a producer that hands
   *     over several batches at once go on while lance-core writes them
   */
  public StreamingFragmentWriter(LanceLocation table, BufferAllocator allocator, Schema schema,
      int maxRowsPerFile, int queuedBatches) {
    this.table = table;
    this.uri = table.uri();
    this.allocator = allocator;
    this.maxRowsPerFile = maxRowsPerFile;
    this.queue = new BatchQueue(allocator, schema, queuedBatches);
  }

  private void start() {
    thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "lance-fragment-writer");
      t.setDaemon(true);
      return t;
    });
    written = thread.submit(() -> {
      try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
        Data.exportArrayStream(allocator, queue, stream);
        var b = table.fragments()
            .datasetUri(uri)
            .allocator(allocator)
            .data(stream);
        if (maxRowsPerFile > 0) {
          b.maxRowsPerFile(maxRowsPerFile);
        }
        return b.execute();
      } finally {
        queue.consumerDone();
      }
    });
  }

  /**
   * Hands {@code batch} to lance-core (which closes it); {@code false} when lance-core stopped
   * reading, the batch then dropped: its failure comes from {@link #finish}.
   */
  public boolean put(ArrowRecordBatch batch) {
    if (written == null) {
      start();
    }
    return queue.put(batch, written);
  }

  /**
   * Ends the stream and waits until lance-core is done with the allocator (even when this
   * thread is interrupted; the interrupt is kept for the caller).
   *
   * @param failure why the batches stopped, or {@code null}: lance-core then sees the stream
   *     end in error and writes nothing more
   * @return the fragments written (none when nothing was put)
   */
  public List<FragmentMetadata> finish(Throwable failure) {
    ended = true;
    if (written == null) {
      return List.of();
    }
    boolean interrupted = Thread.interrupted();
    try {
      queue.end(failure);
      while (true) {
        try {
          return written.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          Throwable c = e.getCause();
          if (failure != null) {
            return List.of(); // the caller reports its own failure
          }
          throw c instanceof RuntimeException re ? re
              : new IllegalStateException("lance-core could not write fragments of " + uri
                  + ": " + c, c);
        }
      }
    } finally {
      thread.shutdown();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Ends a stream not finished (after a failure of the caller's), and frees the queue. */
  @Override
  public void close() {
    if (!ended) {
      finish(new IllegalStateException("the writer was closed before its stream ended"));
    }
    try {
      queue.close();
    } catch (IOException ignored) {
      // the reader's own vectors only; nothing else to release
    }
  }

  /**
   * The stream lance-core reads: batches encoded by the producing thread, handed over as
   * {@link ArrowRecordBatch}es (the producer's vectors closed, their buffers kept by the record
   * batch), loaded into this reader's root one at a time.
   */
  private static final class BatchQueue extends ArrowReader {
    private static final Object END = new Object();
    private final Schema schema;
    private final BlockingQueue<Object> queue;
    private volatile boolean consumerDone;

    BatchQueue(BufferAllocator allocator, Schema schema, int capacity) {
      super(allocator);
      this.schema = schema;
      this.queue = new ArrayBlockingQueue<>(capacity);
    }

    boolean put(ArrowRecordBatch batch, Future<?> writer) {
      try {
        while (!queue.offer(batch, 100, TimeUnit.MILLISECONDS)) {
          if (consumerDone || writer.isDone()) {
            batch.close();
            return false;
          }
        }
        return true;
      } catch (InterruptedException e) {
        batch.close();
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while handing rows to lance-core", e);
      }
    }

    /**
     * No more batches: the end of the stream, or its failure. Waits, not interruptibly, until
     * lance-core takes it or has stopped reading; after a failure the batches still queued are
     * dropped first, so that lance-core stops at once.
     */
    void end(Throwable failure) {
      if (failure != null) {
        drain();
      }
      Object last = failure == null ? END : failure;
      boolean interrupted = false;
      try {
        while (!consumerDone) {
          try {
            if (queue.offer(last, 100, TimeUnit.MILLISECONDS)) {
              return;
            }
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }

    void consumerDone() {
      consumerDone = true;
      drain();
    }

    private void drain() {
      for (Object o; (o = queue.poll()) != null; ) {
        if (o instanceof ArrowRecordBatch b) {
          b.close();
        }
      }
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      Object next;
      try {
        next = queue.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("Interrupted while waiting for rows", e);
      }
      if (next == END) {
        return false;
      }
      if (next instanceof Throwable failure) {
        throw new IOException(failure.toString(), failure);
      }
      try (ArrowRecordBatch batch = (ArrowRecordBatch) next) {
        new VectorLoader(getVectorSchemaRoot()).load(batch);
      }
      return true;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {
      drain();
    }

    @Override
    protected Schema readSchema() {
      return schema;
    }
  }
}
