package io.lancerest.spark.mv.udtf;

import java.io.IOException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder;
import org.apache.spark.sql.catalyst.encoders.RowEncoder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.spark.arrow.LanceArrowWriter;

/**
 * Streams a UDTF's output rows into new, uncommitted fragments of the view table.
 *
 * <p>Rows are pulled lazily, checked against the declared schema, encoded to Arrow batches and
 * handed to lance-core as one stream, so a partition's output becomes a few fragments of up to
 * {@code maxRowsPerFile} rows rather than one fragment per batch, and is never held whole.
 */
final class OutputFragments {
  static final int BATCH_ROWS = 4096;

  private final String viewLocation;
  private final Map<String, String> storageOptions;
  private final Schema arrowSchema;
  private final StructType sparkSchema;
  private final int maxRowsPerFile;
  // Built once per task: creating it generates and compiles code, far too slow per partition.
  private final ExpressionEncoder.Serializer<Row> encoder;

  OutputFragments(String viewLocation, Map<String, String> storageOptions, Schema arrowSchema,
      int maxRowsPerFile) {
    this.viewLocation = viewLocation;
    this.storageOptions = storageOptions;
    this.arrowSchema = arrowSchema;
    this.sparkSchema = LanceArrowUtils.fromArrowSchema(arrowSchema);
    this.maxRowsPerFile = maxRowsPerFile;
    this.encoder = ExpressionEncoder.apply(RowEncoder.encoderFor(sparkSchema)).createSerializer();
  }

  StructType sparkSchema() {
    return sparkSchema;
  }

  /** What one partition's output became. */
  record Written(List<FragmentMetadata> fragments, long rows) {}

  /**
   * Writes {@code rows}; an exception thrown while pulling them (by the UDTF or the schema
   * check) is rethrown as-is, so error handling sees the function's own exception.
   */
  Written write(BufferAllocator allocator, Iterator<Row> rows, String where) throws Exception {
    if (!rows.hasNext()) {
      return new Written(List.of(), 0);
    }
    RowBatches batches = new RowBatches(allocator, rows, where);
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, batches, stream);
      var b = Fragment.write()
          .datasetUri(viewLocation)
          .allocator(allocator)
          .data(stream)
          .storageOptions(storageOptions);
      if (maxRowsPerFile > 0) {
        b.maxRowsPerFile(maxRowsPerFile);
      }
      List<FragmentMetadata> out;
      try {
        out = b.execute();
      } catch (RuntimeException e) {
        // The stream's failure crosses the native boundary as a message only; the reader kept
        // the original exception.
        if (batches.failure != null) {
          throw batches.failure;
        }
        throw e;
      }
      if (batches.failure != null) {
        throw batches.failure;
      }
      return new Written(out, batches.rowsCount);
    } finally {
      batches.close();
    }
  }

  /** Pulls up to {@link #BATCH_ROWS} rows per batch from the UDTF's output. */
  private final class RowBatches extends ArrowReader {
    private final Iterator<Row> rows;
    private final String where;
    private LanceArrowWriter writer;
    Exception failure;
    long rowsCount;

    RowBatches(BufferAllocator allocator, Iterator<Row> rows, String where) {
      super(allocator);
      this.rows = rows;
      this.where = where;
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      VectorSchemaRoot root = getVectorSchemaRoot();
      if (writer == null) {
        writer = LanceArrowWriter.create(root, sparkSchema);
      }
      writer.reset();
      int n = 0;
      try {
        while (n < BATCH_ROWS && rows.hasNext()) {
          Row row = rows.next();
          OutputRows.check(row, sparkSchema, where);
          InternalRow encoded;
          try {
            encoded = encoder.apply(row);
          } catch (RuntimeException e) {
            throw new UdtfOutputMismatchException(where + " returned a row the declared output "
                + "schema " + sparkSchema.simpleString() + " cannot hold: " + e.getMessage());
          }
          writer.write(encoded);
          n++;
        }
      } catch (Exception e) {
        failure = e;
        throw new IOException(e.toString(), e);
      } catch (Error e) {
        failure = new RuntimeException(e);
        throw e;
      }
      writer.finish();
      rowsCount += n;
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
      return arrowSchema;
    }
  }
}
