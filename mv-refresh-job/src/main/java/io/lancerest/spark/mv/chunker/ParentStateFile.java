package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.maintenance.StateFolderSweep;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.file.LanceFileReader;
import org.lance.file.LanceFileWriter;

/**
 * Where a chunker view keeps parent sets too large for its config ({@link ParentState}): a
 * one-row Lance file {@code _mv/chunker_state/<random>/parents.lance} under the view's root, one
 * binary column per set (portable roaring bitmaps). Each refresh that keeps its sets in a file
 * writes a new one before its commit, so the commit's config names it and a version never sees
 * a half-written file; only refreshes read it, never a reader of the view.
 *
 * <p>Written and read through lance-core's file writer and reader with the view's storage
 * options, on any store lance-core reaches. lance-core's compaction and cleanup never look into
 * {@code _mv/}: the view's commit removes the folder it wrote when it does not land, and the one
 * of two refreshes back once it does ({@link
 * io.lancerest.spark.mv.commit.ViewCommit.Builder#sideFolders}); the view's maintenance removes
 * what is left behind ({@link StateFolderSweep}).
 */
final class ParentStateFile {
  static final String DIR = StateFolderSweep.CHUNKER_STATE;
  private static final String FILE = "parents.lance";
  /** The sets, in this order, one column each. */
  static final List<String> COLUMNS = List.of("processed", "truncated", "skipped");
  private static final Schema SCHEMA = new Schema(COLUMNS.stream().map(c ->
      new Field(c, FieldType.notNullable(new ArrowType.Binary()), null)).toList());

  private ParentStateFile() {}

  /** The path, relative to the view's root, of a file no refresh has written yet. */
  static String newPath() {
    return DIR + "/" + UUID.randomUUID() + "/" + FILE;
  }

  /** The folder of the file at {@code path} (relative to the root of {@code view}). */
  static String folder(LanceLocation view, String path) {
    String uri = view.uri();
    String absolute = (uri.endsWith("/") ? uri : uri + "/") + path;
    return absolute.substring(0, absolute.lastIndexOf('/'));
  }

  private static String absolute(LanceLocation view, String path) {
    return folder(view, path) + "/" + FILE;
  }

  /** Whether {@code path} names a file this class writes (a config value is checked first). */
  static boolean isPath(String path) {
    return path != null && path.startsWith(DIR + "/") && path.endsWith("/" + FILE)
        && !path.contains("..") && path.split("/").length == 4;
  }

  /** SHA-256 of the sets as stored, each with its length: what the config's pointer checks. */
  static String sha256(List<byte[]> sets) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      for (byte[] s : sets) {
        d.update(ByteBuffer.allocate(8).putLong(s.length).array());
        d.update(s);
      }
      return HexFormat.of().formatHex(d.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /** Writes {@code sets} (in {@link #COLUMNS} order) as the file at {@code path}. */
  static void write(LanceLocation view, String path, List<byte[]> sets) throws IOException {
    String file = absolute(view, path);
    try (BufferAllocator a = new RootAllocator();
        LanceFileWriter w = LanceFileWriter.open(file, a, null, view.current());
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      for (int i = 0; i < COLUMNS.size(); i++) {
        VarBinaryVector v = (VarBinaryVector) root.getVector(i);
        v.allocateNew(Math.max(1, sets.get(i).length), 1);
        v.setSafe(0, sets.get(i));
      }
      root.setRowCount(1);
      w.write(root);
    } catch (IOException e) {
      throw e;
    } catch (Exception e) { // lance-core's close() is declared to throw anything
      throw new IOException("Cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /** The sets of the file at {@code path}, in {@link #COLUMNS} order. */
  static List<byte[]> read(LanceLocation view, String path) throws IOException {
    String file = absolute(view, path);
    try (BufferAllocator a = new RootAllocator();
        LanceFileReader r = LanceFileReader.open(file, view.current(), a);
        ArrowReader batches = r.readAll(COLUMNS, null, 1)) {
      if (!batches.loadNextBatch() || batches.getVectorSchemaRoot().getRowCount() != 1) {
        throw new IOException(file + " holds no row");
      }
      List<byte[]> out = new ArrayList<>();
      for (int i = 0; i < COLUMNS.size(); i++) {
        out.add(((VarBinaryVector) batches.getVectorSchemaRoot().getVector(i)).get(0));
      }
      return out;
    } catch (IOException e) {
      throw e;
    } catch (Exception e) { // a missing file is lance-core's IOException, undeclared
      throw new IOException("Cannot read " + file + ": " + e.getMessage(), e);
    }
  }
}
