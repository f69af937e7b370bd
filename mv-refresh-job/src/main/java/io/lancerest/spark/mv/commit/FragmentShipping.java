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
   * @param ranges when a range column was given: for each fragment (same order), {@code {min,
   *     max}} of that column over the fragment's rows, or a wider range holding them; an entry
   *     is {@code null} when unknown (the list itself is {@code null} without a range column)
   */
  public record Written(List<FragmentMetadata> fragments, long rows, List<long[]> ranges) {
    public Written(List<FragmentMetadata> fragments, long rows) {
      this(fragments, rows, null);
    }
  }

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
    return writeRows(uri, storageOptions, allocator, schema, rows, maxRowsPerFile, afterBatch,
        -1);
  }

  /**
   * {@link #writeRows(String, Map, BufferAllocator, Schema, Iterator, int, Runnable)}, also
   * giving, for each fragment written, the range of the 64-bit integer column {@code
   * rangeColumn} of its rows ({@link Written#ranges}; a query view's {@code __source_row_id}).
   *
   * <p>The range is tracked per batch of {@value #BATCH_ROWS} rows: lance-core fills the
   * fragments in stream order (it starts the next file when one is full), so fragment {@code k}
   * holds the rows after those of fragments {@code 0..k-1}, and the union of the batches those
   * rows came from bounds its values. When the fragments' row counts do not add up to the rows
   * streamed, every fragment gets the range of all rows, which holds whatever they contain.
   *
   * @param rangeColumn index of a {@code BIGINT} column, or -1 for none
   */
  public static Written writeRows(String uri, Map<String, String> storageOptions,
      BufferAllocator allocator, Schema schema, Iterator<InternalRow> rows, int maxRowsPerFile,
      Runnable afterBatch, int rangeColumn) {
    if (!rows.hasNext()) {
      return new Written(List.of(), 0, rangeColumn < 0 ? null : List.of());
    }
    RowStream batches = new RowStream(allocator, schema, rows, afterBatch, rangeColumn);
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
      long count = batches.count();
      return new Written(out, count, rangeColumn < 0 ? null : batches.ranges(out, count));
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
    /** Column whose range is tracked, or -1. */
    private final int rangeColumn;
    /** Per batch: {@code {rows, min, max}} of {@link #rangeColumn}; guarded by {@code this}. */
    private final List<long[]> batchRanges = new ArrayList<>();
    /** A NULL in the range column: no range can be given. Guarded by {@code this}. */
    private boolean rangeUnknown;

    RowStream(BufferAllocator allocator, Schema schema, Iterator<InternalRow> rows,
        Runnable afterBatch, int rangeColumn) {
      super(allocator);
      this.schema = schema;
      this.sparkSchema = LanceArrowUtils.fromArrowSchema(schema);
      this.rows = rows;
      this.afterBatch = afterBatch == null ? () -> { } : afterBatch;
      this.rangeColumn = rangeColumn;
    }

    /** The range of each fragment of {@code out}, which hold the {@code count} rows streamed. */
    synchronized List<long[]> ranges(List<FragmentMetadata> out, long count) {
      List<long[]> ranges = new ArrayList<>(out.size());
      long physical = 0;
      for (FragmentMetadata f : out) {
        physical += f.getPhysicalRows();
      }
      long[] all = union(0, Long.MAX_VALUE);
      long start = 0;
      for (FragmentMetadata f : out) {
        long rows = f.getPhysicalRows();
        if (rangeUnknown || rows == 0) {
          ranges.add(null);
        } else if (physical != count) {
          ranges.add(all);
        } else {
          ranges.add(union(start, start + rows));
        }
        start += rows;
      }
      return ranges;
    }

    /** {@code {min, max}} over the batches holding rows {@code [from, to)}, or {@code null}. */
    private long[] union(long from, long to) {
      long[] r = null;
      long batchStart = 0;
      for (long[] b : batchRanges) {
        long batchEnd = batchStart + b[0];
        if (batchEnd > from && batchStart < to) {
          r = r == null ? new long[] {b[1], b[2]}
              : new long[] {Math.min(r[0], b[1]), Math.max(r[1], b[2])};
        }
        batchStart = batchEnd;
      }
      return r;
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
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        while (n < BATCH_ROWS && rows.hasNext()) {
          InternalRow row = rows.next();
          if (rangeColumn >= 0) {
            if (row.isNullAt(rangeColumn)) {
              rangeUnknown = true;
            } else {
              long v = row.getLong(rangeColumn);
              min = Math.min(min, v);
              max = Math.max(max, v);
            }
          }
          writer.write(row);
          n++;
        }
        writer.finish();
        count += n;
        if (rangeColumn >= 0 && n > 0) {
          batchRanges.add(new long[] {n, min, max});
        }
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
