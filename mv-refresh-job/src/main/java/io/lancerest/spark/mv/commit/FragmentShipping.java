package io.lancerest.spark.mv.commit;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Iterator;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskContext$;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.spark.arrow.LanceArrowWriter;

/**
 * Executors write fragments; the driver commits them once.
 *
 * <p>A task writes its output with {@link #write} (lance-core's {@code Fragment.write()}: data
 * files are written, nothing is committed) and returns {@link #toBytes} of the resulting
 * metadata. {@code FragmentMetadata}, {@code DataFile}, {@code DeletionFile} and {@code
 * RowIdMeta} are {@code java.io.Serializable} in lance-core 4.0.0; shipping them as a byte array
 * rather than as objects keeps the transfer independent of {@code spark.serializer} (Kryo would
 * otherwise need registrations for lance-core's classes). Driver and executors run the same jar,
 * so Java serialization of these classes is compatible on both ends.
 */
public final class FragmentShipping {
  private FragmentShipping() {}

  /** Writes {@code data} as new, uncommitted fragments of the dataset at {@code uri}. */
  public static List<FragmentMetadata> write(String uri, Map<String, String> storageOptions,
      BufferAllocator allocator, VectorSchemaRoot data, int maxRowsPerFile) {
    var b = Fragment.write()
        .datasetUri(uri)
        .allocator(allocator)
        .data(data)
        .storageOptions(storageOptions == null ? Map.of() : storageOptions);
    if (maxRowsPerFile > 0) {
      b.maxRowsPerFile(maxRowsPerFile);
    }
    return b.execute();
  }

  /** Rows per Arrow batch handed to lance-core by {@link #writeRows}. */
  public static final int BATCH_ROWS = 8192;

  /**
   * What {@link #writeRows} wrote.
   *
   * @param fragments new, uncommitted fragments
   * @param rows rows in them
   */
  public record Written(List<FragmentMetadata> fragments, long rows) {}

  /**
   * Streams Spark rows into new, uncommitted fragments of the dataset at {@code uri}: rows are
   * encoded into Arrow batches of {@value #BATCH_ROWS} and handed to lance-core as one stream,
   * so a task's output becomes a few fragments of up to {@code maxRowsPerFile} rows and is never
   * held whole. {@code schema} is the dataset's Arrow schema (no metadata); the rows must have
   * its columns, in order, with the Spark types {@code LanceArrowUtils.fromArrowSchema} gives.
   *
   * @param afterBatch called after each batch is encoded (tests inject failures here)
   */
  public static Written writeRows(String uri, Map<String, String> storageOptions,
      BufferAllocator allocator, Schema schema, Iterator<InternalRow> rows, int maxRowsPerFile,
      Runnable afterBatch) {
    if (!rows.hasNext()) {
      return new Written(List.of(), 0);
    }
    RowStream batches = new RowStream(allocator, schema, rows, afterBatch);
    // The rows are pulled on lance-core's thread: hand over what this thread did to them so far.
    batches.handOff();
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, batches, stream);
      var b = Fragment.write()
          .datasetUri(uri)
          .allocator(allocator)
          .data(stream)
          .storageOptions(storageOptions == null ? Map.of() : storageOptions);
      if (maxRowsPerFile > 0) {
        b.maxRowsPerFile(maxRowsPerFile);
      }
      List<FragmentMetadata> out;
      try {
        out = b.execute();
      } catch (RuntimeException e) {
        // A failure inside the stream crosses the native boundary as text only; rethrow the
        // original so callers (and tests) see its type.
        RuntimeException failure = batches.failure();
        if (failure != null) {
          throw failure;
        }
        throw e;
      }
      RuntimeException failure = batches.failure();
      if (failure != null) {
        throw failure;
      }
      // count() takes the lock each batch was pulled under, so from here on this thread also
      // sees everything the rows iterator did on lance-core's thread (e.g. sets it filled).
      return new Written(out, batches.count());
    } finally {
      try {
        batches.close();
      } catch (IOException ignored) {
        // vectors are released by close; nothing else to clean
      }
    }
  }

  /** Pulls {@link #BATCH_ROWS} rows at a time into the stream's batch. */
  private static final class RowStream extends ArrowReader {
    private final Schema schema;
    private final StructType sparkSchema;
    private final Iterator<InternalRow> rows;
    private final Runnable afterBatch;
    private LanceArrowWriter writer;
    /** The Spark task pulling {@link #rows}; {@code null} outside a task. */
    private final TaskContext task = TaskContext.get();
    /**
     * Guarded by {@code this}: lance-core pulls batches on its own thread and the task thread
     * reads these after {@code execute()} returns, with no other happens-before between them.
     */
    private RuntimeException failure;
    private long count;

    RowStream(BufferAllocator allocator, Schema schema, Iterator<InternalRow> rows,
        Runnable afterBatch) {
      super(allocator);
      this.schema = schema;
      this.sparkSchema = LanceArrowUtils.fromArrowSchema(schema);
      this.rows = rows;
      this.afterBatch = afterBatch == null ? () -> { } : afterBatch;
    }

    /** Publishes the task thread's earlier use of the rows iterator to the puller's thread. */
    synchronized void handOff() {
      // the lock release is the point: lance-core's thread takes it in loadNextBatch
      count = 0;
    }

    synchronized long count() {
      return count;
    }

    synchronized RuntimeException failure() {
      return failure;
    }

    /**
     * Synchronized: the rows iterator (and whatever state its filters update) is used under
     * this lock, which the task thread takes again after {@code execute()} via {@link #count}.
     */
    @Override
    public synchronized boolean loadNextBatch() throws IOException {
      VectorSchemaRoot root = getVectorSchemaRoot();
      if (writer == null) {
        writer = LanceArrowWriter.create(root, sparkSchema);
      }
      writer.reset();
      int n = 0;
      // lance-core calls this from its own native thread. Spark iterators that open a source
      // partition while iterating (a coalesced RDD reads several) need the task's TaskContext,
      // which is thread-local: lend it to this thread for the batch.
      boolean lent = task != null && TaskContext.get() == null;
      if (lent) {
        TaskContext$.MODULE$.setTaskContext(task);
      }
      try {
        while (n < BATCH_ROWS && rows.hasNext()) {
          writer.write(rows.next());
          n++;
        }
        writer.finish();
        count += n;
        if (n > 0) {
          afterBatch.run();
        }
      } catch (RuntimeException e) {
        failure = e;
        throw new IOException(e.toString(), e);
      } finally {
        if (lent) {
          TaskContext$.MODULE$.unset();
        }
      }
      return n > 0;
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected Schema readSchema() {
      return schema;
    }
  }

  public static byte[] toBytes(List<FragmentMetadata> fragments) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(new ArrayList<>(fragments));
    } catch (IOException e) {
      throw new IllegalStateException("Cannot serialise fragment metadata: " + e, e);
    }
    return bytes.toByteArray();
  }

  @SuppressWarnings("unchecked")
  public static List<FragmentMetadata> fromBytes(byte[] bytes) {
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
      return (List<FragmentMetadata>) in.readObject();
    } catch (IOException | ClassNotFoundException | ClassCastException e) {
      throw new IllegalStateException("Cannot read fragment metadata shipped by a task: " + e, e);
    }
  }
}
