package io.lancerest.spark.mv.commit;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.lance.Fragment;
import org.lance.FragmentMetadata;

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
