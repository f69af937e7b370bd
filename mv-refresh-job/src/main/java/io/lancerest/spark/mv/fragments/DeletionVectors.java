package io.lancerest.spark.mv.fragments;

import com.github.luben.zstd.Zstd;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.compression.AbstractCompressionCodec;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel;
import org.lance.FragmentMetadata;
import org.lance.fragment.DeletionFile;
import org.lance.fragment.DeletionFileType;
import org.roaringbitmap.RoaringBitmap;

/**
 * The deleted row offsets of a fragment, read straight from its deletion file.
 *
 * <p>lance-core 4.0.0's Java API tells a fragment's deleted rows only through a scan of its live
 * row ids or addresses: about 30 ms per million rows, for every fragment that gained a deletion.
 * Its deletion files are small and immutable: {@code _deletions/<fragment>-<read version>-<id>}
 * under the dataset root, either an Arrow IPC file of one {@code uint32} column of offsets
 * compressed with zstd ({@code .arrow}) or a serialized 32-bit roaring bitmap ({@code .bin}), the
 * portable format that Java's RoaringBitmap reads. Reading one takes well under a millisecond.
 *
 * <p>Only files on a local file system are read this way: lance-core has no Java call that reads
 * an arbitrary object of a dataset's store. For any other location, and for a deletion file of
 * another base path, {@link #read} answers {@code null} and the caller scans as before.
 */
public final class DeletionVectors {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(DeletionVectors.class);

  private DeletionVectors() {}

  /**
   * How a refresh learns a fragment's deleted offsets: the offsets, or {@code null} when they
   * cannot be had without a scan (which the caller then runs).
   */
  @FunctionalInterface
  public interface Reader {
    RoaringBitmap read(String datasetUri, FragmentMetadata f) throws IOException;
  }

  /** Reads the deletion files of datasets on a local file system ({@link #read}). */
  public static final Reader DIRECT = DeletionVectors::read;

  /**
   * Deletion vectors read by recent refreshes of one catalog ({@code RefreshCaches}): a
   * fragment's deletion file at a refresh's target version is the one at the next refresh's
   * watermark. A deletion file is immutable and named by its fragment, read version and id, so
   * those (with the dataset's location) are the key. At most {@value #CACHE_BYTES} bytes are
   * kept, least recently used first out.
   */
  public static final class Cache {
    static final long CACHE_BYTES = 32L << 20;
    private final java.util.LinkedHashMap<String, RoaringBitmap> held =
        new java.util.LinkedHashMap<>(64, 0.75f, true);
    private long bytes;

    /** {@code reader}, its answers kept here. */
    public Reader over(Reader reader) {
      return (uri, f) -> {
        DeletionFile d = f.getDeletionFile();
        if (d == null) {
          return reader.read(uri, f);
        }
        String key = uri + '\n' + f.getId() + '-' + d.getReadVersion() + '-' + d.getId();
        synchronized (held) {
          RoaringBitmap hit = held.get(key);
          if (hit != null) {
            return hit.clone();
          }
        }
        RoaringBitmap read = reader.read(uri, f);
        if (read != null) {
          put(key, read.clone());
        }
        return read;
      };
    }

    private void put(String key, RoaringBitmap b) {
      long size = b.getLongSizeInBytes();
      synchronized (held) {
        RoaringBitmap old = held.put(key, b);
        bytes += size - (old == null ? 0 : old.getLongSizeInBytes());
        for (var it = held.entrySet().iterator(); bytes > CACHE_BYTES && it.hasNext(); ) {
          bytes -= it.next().getValue().getLongSizeInBytes();
          it.remove();
        }
      }
    }
  }

  /**
   * The offsets of the rows deleted from {@code f} in the dataset at {@code datasetUri} (empty
   * without a deletion file), or {@code null} when its deletion file cannot be read directly.
   *
   * @throws IOException the file is local but missing (lance-core could not read the fragment
   *     either); a file of a form this reader does not know gives {@code null}, logged
   */
  public static RoaringBitmap read(String datasetUri, FragmentMetadata f) throws IOException {
    DeletionFile d = f.getDeletionFile();
    if (d == null) {
      return new RoaringBitmap();
    }
    Path root = localRoot(datasetUri);
    if (root == null || d.getBaseId().isPresent() || d.getFileType() == null) {
      return null;
    }
    boolean bitmap = d.getFileType() == DeletionFileType.BITMAP;
    Path file = root.resolve("_deletions").resolve(f.getId() + "-" + d.getReadVersion() + "-"
        + Long.toUnsignedString(d.getId()) + (bitmap ? ".bin" : ".arrow"));
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new IOException("Deletion file " + file + " of fragment " + f.getId() + " is "
          + "missing", e);
    }
    RoaringBitmap out;
    try {
      out = bitmap ? fromBitmap(bytes, file) : fromArrow(bytes, file);
      Long expected = d.getNumDeletedRows();
      if (expected != null && out.getLongCardinality() != expected) {
        throw new IOException("it holds " + out.getLongCardinality() + " offsets where the "
            + "manifest says " + expected);
      }
    } catch (IOException e) {
      // a form this reader does not know (a newer lance-core's, say): lance-core can still scan
      LOG.warn("Deletion file {} of fragment {} is not read directly ({}); its rows are "
          + "scanned instead", file, f.getId(), e.getMessage());
      return null;
    }
    return out;
  }

  /**
   * The local directory of a dataset at {@code uri} ({@code file:} or a plain path), or {@code
   * null} for any other scheme.
   */
  public static Path localRoot(String uri) {
    if (uri == null || uri.isEmpty()) {
      return null;
    }
    int colon = uri.indexOf(':');
    int slash = uri.indexOf('/');
    boolean hasScheme = colon > 1 && (slash < 0 || colon < slash);
    if (!hasScheme) {
      return Path.of(uri);
    }
    if (!uri.regionMatches(true, 0, "file:", 0, 5)) {
      return null;
    }
    try {
      URI u = URI.create(uri);
      if (u.getAuthority() != null && !u.getAuthority().isEmpty()
          && !u.getAuthority().equalsIgnoreCase("localhost")) {
        return null; // a file on another host
      }
      return Path.of(new URI("file", null, u.getPath(), null));
    } catch (IllegalArgumentException | java.net.URISyntaxException e) {
      // file:relative or other forms URI does not take: the part after the scheme
      return Path.of(uri.substring(5));
    }
  }

  private static RoaringBitmap fromBitmap(byte[] bytes, Path file) throws IOException {
    RoaringBitmap out = new RoaringBitmap();
    try {
      out.deserialize(ByteBuffer.wrap(bytes));
    } catch (RuntimeException e) {
      throw new IOException("Deletion file " + file + " is not a roaring bitmap: " + e, e);
    }
    return out;
  }

  private static RoaringBitmap fromArrow(byte[] bytes, Path file) throws IOException {
    RoaringBitmap out = new RoaringBitmap();
    try (BufferAllocator a = new RootAllocator();
        ArrowFileReader r = new ArrowFileReader(new ByteArrayReadableSeekableByteChannel(bytes),
            a, ZstdCodec.FACTORY)) {
      while (r.loadNextBatch()) {
        FieldVector v = r.getVectorSchemaRoot().getVector(0);
        if (!(v instanceof UInt4Vector offsets)) {
          throw new IOException("Deletion file " + file + " has a column of type "
              + v.getField().getType() + ", not uint32");
        }
        int n = offsets.getValueCount();
        int[] batch = new int[n];
        for (int i = 0; i < n; i++) {
          batch[i] = offsets.get(i);
        }
        out.add(batch);
      }
    } catch (IOException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new IOException("Deletion file " + file + " cannot be read as Arrow: " + e, e);
    }
    return out;
  }

  /**
   * zstd for Arrow IPC buffers, on the zstd-jni that Spark ships. Arrow's own codec
   * ({@code arrow-compression}) would be one more jar for users to put next to the lance jars
   * for these few lines; only decompression is ever asked for.
   */
  private static final class ZstdCodec extends AbstractCompressionCodec {
    static final CompressionCodec.Factory FACTORY = new CompressionCodec.Factory() {
      @Override
      public CompressionCodec createCodec(CompressionUtil.CodecType type) {
        return switch (type) {
          case NO_COMPRESSION -> NoCompressionCodec.INSTANCE;
          case ZSTD -> new ZstdCodec();
          default -> throw new IllegalArgumentException("Deletion files use zstd, not " + type);
        };
      }

      @Override
      public CompressionCodec createCodec(CompressionUtil.CodecType type, int level) {
        return createCodec(type);
      }
    };

    @Override
    protected ArrowBuf doCompress(BufferAllocator allocator, ArrowBuf uncompressed) {
      throw new UnsupportedOperationException("deletion files are only read");
    }

    @Override
    protected ArrowBuf doDecompress(BufferAllocator allocator, ArrowBuf compressed) {
      long size = readUncompressedLength(compressed);
      byte[] src = new byte[(int) (compressed.writerIndex() - CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH)];
      compressed.getBytes(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH, src);
      byte[] dst = Zstd.decompress(src, (int) size);
      ArrowBuf out = allocator.buffer(size);
      out.setBytes(0, dst);
      out.writerIndex(size);
      return out;
    }

    @Override
    public CompressionUtil.CodecType getCodecType() {
      return CompressionUtil.CodecType.ZSTD;
    }
  }
}
