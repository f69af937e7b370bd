package io.lancerest.client.arrow;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.SeekableReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel;

/** Encodes request bodies as Arrow IPC streams and decodes IPC answers (file or stream). */
public final class ArrowIpc {
  private static final byte[] FILE_MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  private ArrowIpc() {}

  /** One batch as an IPC stream. */
  public static byte[] toStream(VectorSchemaRoot batch) {
    return toStream(batch.getSchema(), List.of(batch));
  }

  /**
   * Any number of batches (possibly none: a schema-only stream, which is how an empty table is
   * created) as one IPC stream. Every batch must have {@code schema}.
   */
  public static byte[] toStream(Schema schema, Iterable<VectorSchemaRoot> batches) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BufferAllocator alloc = null;
    for (VectorSchemaRoot b : batches) {
      if (!b.getSchema().equals(schema)) {
        throw new IllegalArgumentException("A batch has schema " + b.getSchema()
            + " but the stream was declared with " + schema);
      }
      alloc = b.getFieldVectors().isEmpty() ? alloc : b.getFieldVectors().get(0).getAllocator();
    }
    // The writer needs a root of its own to load each batch into; the batches stay untouched.
    try (BufferAllocator own = alloc == null
            ? new org.apache.arrow.memory.RootAllocator()
            : alloc.newChildAllocator("arrow-ipc-writer", 0, Long.MAX_VALUE);
        VectorSchemaRoot staging = VectorSchemaRoot.create(schema, own);
        ArrowStreamWriter writer =
            new ArrowStreamWriter(staging, null, Channels.newChannel(out))) {
      writer.start();
      VectorLoader loader = new VectorLoader(staging);
      for (VectorSchemaRoot b : batches) {
        try (ArrowRecordBatch rb = new VectorUnloader(b).getRecordBatch()) {
          loader.load(rb);
        }
        writer.writeBatch();
      }
      writer.end();
    } catch (IOException e) {
      throw new UncheckedIOException("Could not encode Arrow data as an IPC stream", e);
    }
    return out.toByteArray();
  }

  /**
   * Rejects bytes that cannot start an IPC stream before Arrow reads them: Arrow takes the first
   * bytes as a message length and would try to read (and allocate) that much, e.g. 1.8 GB for a
   * body starting with the text '{"ro'.
   */
  private static void checkStreamStart(byte[] bytes) throws IOException {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    if (bytes.length < 4) {
      throw new IOException("too short for an Arrow IPC stream");
    }
    int length = b.getInt(0);
    int header = 4;
    if (length == -1) { // continuation marker, then the length (format since Arrow 0.15)
      if (bytes.length < 8) {
        throw new IOException("too short for an Arrow IPC stream");
      }
      length = b.getInt(4);
      header = 8;
    }
    if (length < 0 || length > bytes.length - header) {
      throw new IOException("the first message length does not fit the body: not Arrow IPC");
    }
  }

  /**
   * Decodes an IPC payload, file or stream format (told apart by the file magic), into batches
   * owned by {@code allocator}. The caller closes the result.
   */
  public static ArrowBatches read(byte[] bytes, BufferAllocator allocator) throws IOException {
    boolean file = bytes.length >= FILE_MAGIC.length
        && Arrays.equals(Arrays.copyOf(bytes, FILE_MAGIC.length), FILE_MAGIC);
    if (!file) {
      checkStreamStart(bytes);
    }
    List<VectorSchemaRoot> batches = new ArrayList<>();
    try (ArrowReader reader = file
        ? new ArrowFileReader(
            new SeekableReadChannel(new ByteArrayReadableSeekableByteChannel(bytes)), allocator)
        : new ArrowStreamReader(new java.io.ByteArrayInputStream(bytes), allocator)) {
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      Schema schema = root.getSchema();
      try {
        while (reader.loadNextBatch()) {
          // The reader reuses its root; each batch is moved into a root of its own.
          VectorSchemaRoot copy = VectorSchemaRoot.create(schema, allocator);
          batches.add(copy);
          try (ArrowRecordBatch rb = new VectorUnloader(root).getRecordBatch()) {
            new VectorLoader(copy).load(rb);
          }
        }
      } catch (IOException | RuntimeException e) {
        batches.forEach(VectorSchemaRoot::close);
        throw e;
      }
      return new ArrowBatches(schema, batches);
    }
  }
}
