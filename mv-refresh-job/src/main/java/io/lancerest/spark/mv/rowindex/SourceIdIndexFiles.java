package io.lancerest.spark.mv.rowindex;

import io.lancerest.spark.connector.LanceLocation;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.FragmentMetadata;
import org.lance.file.LanceFileReader;
import org.lance.file.LanceFileWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a view fragment's {@link SourceIdIndex} is kept: a one-row Lance file {@code
 * _mv/source_ids/<data file>/index.lance} under the view's root, named after the fragment's
 * first data file, which lance-core names uniquely and never rewrites, so the name alone ties
 * the index to exactly those rows. Written and read through lance-core's file writer and
 * reader, with the view's storage options, on any store lance-core reaches.
 *
 * <p>lance-core's own cleanup never touches this folder (it only lists the folders it manages):
 * the view's commit removes the folder of each fragment it drops ({@link #drop}), through
 * lance-core's {@code Dataset.drop}, which removes a folder and everything in it. An index that
 * is missing or unreadable is not an error: the fragment is then read instead.
 */
public final class SourceIdIndexFiles {
  private static final Logger LOG = LoggerFactory.getLogger(SourceIdIndexFiles.class);
  static final String DIR = "_mv/source_ids";
  private static final String FILE = "index.lance";
  private static final String COLUMN = "index";
  /** File metadata: the data file the index describes, checked when read. */
  private static final String DATA_FILE = "lancerest.data_file";
  private static final Schema SCHEMA = new Schema(List.of(
      new Field(COLUMN, FieldType.notNullable(new ArrowType.Binary()), null)));

  private SourceIdIndexFiles() {}

  /** The folder of the index of {@code f}, or {@code null} for a fragment without data files. */
  static String folder(String viewUri, FragmentMetadata f) {
    String stem = stem(f);
    return stem == null ? null : (viewUri.endsWith("/") ? viewUri : viewUri + "/") + DIR + "/"
        + stem;
  }

  /** The name of the index folder of {@code f}: its first data file's, without the suffix. */
  private static String stem(FragmentMetadata f) {
    String file = dataFile(f);
    if (file == null) {
      return null;
    }
    String stem = file.endsWith(".lance") ? file.substring(0, file.length() - 6) : file;
    return stem.replace('/', '_');
  }

  /**
   * Removes, from a view on a local file system, the index folders of fragments that {@code
   * current} (the view's latest fragments) does not hold and that are older than {@code grace}
   * (a refresh in progress may still be about to commit one): what attempts that never
   * committed, or commits of other writers, left behind. Object stores are not listed (lance-core
   * offers no listing); there only {@link #drop} at commit removes folders. Returns how many went.
   */
  public static int sweep(String viewUri, List<FragmentMetadata> current,
      java.time.Duration grace) {
    java.nio.file.Path local = io.lancerest.spark.mv.fragments.DeletionVectors.localRoot(viewUri);
    java.nio.file.Path dir = local == null ? null : local.resolve(DIR);
    if (dir == null || !java.nio.file.Files.isDirectory(dir)) {
      return 0;
    }
    java.util.Set<String> keep = new java.util.HashSet<>();
    for (FragmentMetadata f : current) {
      String stem = stem(f);
      if (stem != null) {
        keep.add(stem);
      }
    }
    long before = System.currentTimeMillis() - grace.toMillis();
    int removed = 0;
    try (var folders = java.nio.file.Files.list(dir)) {
      for (java.nio.file.Path p : folders.toList()) {
        if (keep.contains(p.getFileName().toString())
            || java.nio.file.Files.getLastModifiedTime(p).toMillis() > before) {
          continue;
        }
        try (var files = java.nio.file.Files.walk(p)) {
          for (java.nio.file.Path x : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
            java.nio.file.Files.deleteIfExists(x);
          }
        }
        removed++;
      }
    } catch (IOException e) {
      LOG.debug("Source id indexes of {} not swept: {}", viewUri, e.getMessage());
    }
    return removed;
  }

  private static String dataFile(FragmentMetadata f) {
    return f.getFiles() == null || f.getFiles().isEmpty() ? null : f.getFiles().get(0).getPath();
  }

  /**
   * Writes the index of the new (uncommitted) fragment {@code f} of the view at {@code viewUri};
   * {@code false} for a fragment without data files, which has no index.
   */
  public static boolean write(LanceLocation view, BufferAllocator a, FragmentMetadata f,
      SourceIdIndex index) throws IOException {
    String folder = folder(view.uri(), f);
    if (folder == null) {
      return false;
    }
    byte[] bytes = index.toBytes();
    try (LanceFileWriter w = LanceFileWriter.open(folder + "/" + FILE, a, null,
        view.current());
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      VarBinaryVector v = (VarBinaryVector) root.getVector(0);
      v.allocateNew(bytes.length, 1);
      v.setSafe(0, bytes);
      root.setRowCount(1);
      w.write(root);
      w.addSchemaMetadata(Map.of(DATA_FILE, dataFile(f)));
      return true;
    } catch (IOException e) {
      throw e;
    } catch (Exception e) { // lance-core's close() is declared to throw anything
      throw new IOException("Cannot write the source id index of fragment " + dataFile(f)
          + " at " + folder + ": " + e.getMessage(), e);
    }
  }

  /**
   * The index of fragment {@code f} of the view at {@code viewUri}, or {@code null} when there
   * is none or it cannot be read (logged; the caller reads the fragment instead).
   */
  public static SourceIdIndex read(LanceLocation view, BufferAllocator a, FragmentMetadata f) {
    String folder = folder(view.uri(), f);
    if (folder == null) {
      return null;
    }
    try (LanceFileReader r = LanceFileReader.open(folder + "/" + FILE, view.current(), a)) {
      Map<String, String> meta = r.schema().getCustomMetadata();
      String describes = meta == null ? null : meta.get(DATA_FILE);
      if (!dataFile(f).equals(describes)) {
        LOG.warn("Source id index at {} describes data file {}, not {}: not used", folder,
            describes, dataFile(f));
        return null;
      }
      try (ArrowReader batches = r.readAll(List.of(COLUMN), null, 1)) {
        if (!batches.loadNextBatch() || batches.getVectorSchemaRoot().getRowCount() != 1) {
          throw new IOException("no index row");
        }
        byte[] bytes = ((VarBinaryVector) batches.getVectorSchemaRoot().getVector(0)).get(0);
        SourceIdIndex index = SourceIdIndex.parse(bytes);
        if (index.rows() != f.getPhysicalRows()) {
          throw new IOException("an index of " + index.rows() + " rows for a fragment of "
              + f.getPhysicalRows());
        }
        return index;
      }
    } catch (Exception e) { // a missing file is an IOException of lance-core's
      LOG.debug("No usable source id index at {}: {}", folder, e.getMessage());
      return null;
    }
  }

  /**
   * Removes the indexes of {@code fragments}, which the view no longer holds (or never will: an
   * attempt that did not commit); failures are logged, and leave a small folder behind.
   */
  public static void drop(LanceLocation view, List<FragmentMetadata> fragments) {
    String viewUri = view.uri();
    Map<String, String> options = null;
    java.nio.file.Path local = io.lancerest.spark.mv.fragments.DeletionVectors.localRoot(viewUri);
    for (FragmentMetadata f : fragments) {
      String folder = folder(viewUri, f);
      if (folder == null || local != null && !java.nio.file.Files.isDirectory(
          local.resolve(DIR).resolve(stem(f)))) {
        continue;
      }
      try {
        if (options == null) {
          options = view.current();
        }
        org.lance.Dataset.drop(folder, options);
      } catch (Exception e) {
        LOG.debug("Source id index at {} not removed: {}", folder, e.getMessage());
      }
    }
  }
}
