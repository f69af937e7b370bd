package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import io.lancerest.spark.mv.rowindex.SourceIdCollector;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
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
  public static List<FragmentMetadata> write(LanceLocation table, BufferAllocator allocator,
      VectorSchemaRoot data, int maxRowsPerFile) {
    var b = table.fragments()
        .datasetUri(table.uri())
        .allocator(allocator)
        .data(data);
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
   * @param ranges when a source id column was given: for each fragment (same order), the range
   *     of that column over the fragment's rows and whether its {@link SourceIdIndex} was
   *     written; an entry is {@code null} when unknown (the list itself is {@code null} without
   *     such a column)
   */
  public record Written(List<FragmentMetadata> fragments, long rows,
      List<FragmentSourceRanges.Range> ranges) {
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
  public static Written writeRows(LanceLocation table, BufferAllocator allocator, Schema schema, Iterator<InternalRow> rows, int maxRowsPerFile,
      Runnable afterBatch) {
    return writeRows(table, allocator, schema, rows, maxRowsPerFile, afterBatch, -1);
  }

  /**
   * {@link #writeRows(String, Map, BufferAllocator, Schema, Iterator, int, Runnable)}, also
   * giving, for each fragment written, the range of the 64-bit integer column {@code
   * rangeColumn} of its rows ({@link Written#ranges}; a query view's {@code __source_row_id}),
   * and writing each fragment's {@link SourceIdIndex} ({@link SourceIdIndexFiles}) when the
   * column never decreases in it.
   *
   * <p>The rows are pulled and encoded into Arrow batches on the calling thread (a Spark task's,
   * with its {@code TaskContext}), while lance-core writes the batches already encoded on a
   * thread of its own, at most {@value StreamingFragmentWriter#QUEUED_BATCHES} batches behind: reading and projecting
   * the rows overlaps with lance-core's encoding and writing, as in lance-spark's own writer.
   * (Pulled by lance-core through the stream instead, the two run one after the other, and a
   * full refresh is clearly slower than a CTAS of the same rows; docs/benchmarks.md.)
   *
   * <p>The column's values are kept in stream order (8 bytes a row) until lance-core is done:
   * lance-core fills the fragments in stream order (it starts the next file when one is full),
   * so fragment {@code k} holds the rows after those of fragments {@code 0..k-1}. When the
   * fragments' row counts do not add up to the rows streamed, every fragment gets the range of
   * all rows, which holds whatever they contain, and no index.
   *
   * @param rangeColumn index of a {@code BIGINT} column, or -1 for none
   */
  public static Written writeRows(LanceLocation table, BufferAllocator allocator, Schema schema, Iterator<InternalRow> rows, int maxRowsPerFile,
      Runnable afterBatch, int rangeColumn) {
    if (!rows.hasNext()) {
      return new Written(List.of(), 0, rangeColumn < 0 ? null : List.of());
    }
    Runnable hook = afterBatch == null ? () -> { } : afterBatch;
    StructType sparkSchema = LanceArrowUtils.fromArrowSchema(schema);
    long count = 0;
    SourceIdCollector ids = rangeColumn >= 0 ? new SourceIdCollector() : null;
    Throwable failure = null;
    List<FragmentMetadata> out;
    try (StreamingFragmentWriter writer = new StreamingFragmentWriter(table, allocator, schema,
        maxRowsPerFile)) {
      try {
        while (rows.hasNext()) {
          int n = 0;
          ArrowRecordBatch batch;
          try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
            LanceArrowWriter w = LanceArrowWriter.create(root, sparkSchema);
            while (n < BATCH_ROWS && rows.hasNext()) {
              InternalRow row = rows.next();
              if (ids != null) {
                if (row.isNullAt(rangeColumn)) {
                  ids.addNull();
                } else {
                  ids.add(row.getLong(rangeColumn));
                }
              }
              w.write(row);
              n++;
            }
            w.finish();
            batch = new VectorUnloader(root).getRecordBatch();
          }
          if (!writer.put(batch)) {
            break; // lance-core stopped reading: its failure is reported below
          }
          count += n;
          hook.run();
        }
      } catch (Throwable t) { // whatever the rows throw (a task kill, an Error) ends the stream
        failure = t;
      }
      out = writer.finish(failure);
    }
    if (failure != null) {
      // the rows failed (lance-core only saw the stream end in error): rethrown as they were
      if (failure instanceof RuntimeException re) {
        throw re;
      }
      if (failure instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException("Reading the rows to write to " + table.uri() + " failed: "
          + failure, failure);
    }
    return new Written(out, count, ids == null ? null
        : ids.ranges(table, allocator, out, count));
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
