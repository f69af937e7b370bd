package io.lancerest.spark.mv.udtf;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.lance.FragmentMetadata;
import org.lance.fragment.DataFile;
import io.lancerest.spark.mv.commit.FragmentShipping;

/**
 * Per-partition results of a refresh that has not committed yet, so that the next run resumes.
 *
 * <p>A task that finishes a partition has already written the partition's fragments into the
 * view table's directory (uncommitted); it then writes one small file naming them, under
 * {@code <view>/_udtf_checkpoints/<run key>/<partition key id>.ckpt}. The run key is the SHA-256
 * of the UDTF's name, version, envelope SHA and the source version: a later run with the same
 * four reuses the files, anything else ignores (and then removes) them. After a successful
 * commit the whole directory is removed.
 *
 * <p>Files are written to a temporary name and renamed, so a task killed mid-write never leaves
 * a half checkpoint. A checkpoint whose data files are gone (say a VACUUM ran in between) is not
 * reused: the partition is recomputed.
 *
 * <p>Paths go through Hadoop's FileSystem; a Lance {@code s3://} location maps to {@code s3a://}.
 */
final class PartitionCheckpoints implements java.io.Serializable {
  static final String DIR = "_udtf_checkpoints";

  private final String viewLocation;
  private final String runKey;

  /**
   * @param sourceIdentity what tells this source table apart from another one of the same name
   *     (its location and when {@code sourceVersion} was written); "" when unknown. A source
   *     dropped and re-created restarts its version numbers, so the number alone could match a
   *     failed run's checkpoints of the old table.
   */
  PartitionCheckpoints(String viewLocation, UdtfDefinition definition, long sourceVersion,
      String sourceIdentity) {
    this.viewLocation = viewLocation;
    this.runKey = PartitionKeys.sha256(String.join("\u0000", definition.name(),
        definition.version(), definition.udtfSha(), Long.toString(sourceVersion),
        sourceIdentity == null ? "" : sourceIdentity)).substring(0, 32);
  }

  /** One finished partition. */
  record Checkpoint(String keyId, String keyDisplay, long rows, byte[] fragments)
      implements java.io.Serializable {}

  private Path root() {
    return hadoopPath(viewLocation + "/" + DIR);
  }

  private Path runDir() {
    return new Path(root(), runKey);
  }

  static Path hadoopPath(String location) {
    URI u = URI.create(location.replace(" ", "%20"));
    if (u.getScheme() == null) {
      return new Path("file", null, location);
    }
    if ("s3".equals(u.getScheme())) {
      return new Path("s3a" + location.substring(2));
    }
    return new Path(location);
  }

  /** One per JVM: a new Configuration re-reads Hadoop's XML resources, ~100 ms each time. */
  private static volatile Configuration conf;

  private static FileSystem fs(Path p) throws IOException {
    Configuration c = conf;
    if (c == null) {
      c = new Configuration();
      conf = c;
    }
    if ("file".equals(p.toUri().getScheme())) {
      // The raw local file system: no .crc side files, rename is one syscall.
      return FileSystem.getLocal(c).getRawFileSystem();
    }
    return p.getFileSystem(c);
  }

  void write(Checkpoint c) {
    Path dir = runDir();
    Path tmp = new Path(dir, "." + c.keyId() + "." + java.util.UUID.randomUUID() + ".tmp");
    Path done = new Path(dir, c.keyId() + ".ckpt");
    try {
      FileSystem fs = fs(dir);
      fs.mkdirs(dir);
      try (FSDataOutputStream out = fs.create(tmp, true)) {
        out.write(serialize(c));
      }
      fs.delete(done, false);
      if (!fs.rename(tmp, done)) {
        throw new IOException("rename " + tmp + " -> " + done + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot checkpoint partition " + c.keyDisplay()
          + " of view '" + viewLocation + "' under " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * The usable checkpoints of this run key, by key id. Checkpoints of other run keys (another
   * source version or UDTF version) are removed: they can never be reused.
   */
  Map<String, Checkpoint> load() {
    Map<String, Checkpoint> out = new HashMap<>();
    Path root = root();
    try {
      FileSystem fs = fs(root);
      if (!fs.exists(root)) {
        return out;
      }
      for (FileStatus run : fs.listStatus(root)) {
        if (!run.getPath().getName().equals(runKey)) {
          fs.delete(run.getPath(), true);
        }
      }
      Path dir = runDir();
      if (!fs.exists(dir)) {
        return out;
      }
      for (FileStatus f : fs.listStatus(dir)) {
        if (!f.getPath().getName().endsWith(".ckpt")) {
          continue;
        }
        Checkpoint c;
        try (FSDataInputStream in = fs.open(f.getPath())) {
          c = deserialize(in.readAllBytes());
        }
        if (dataFilesExist(fs, c)) {
          out.put(c.keyId(), c);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the resume checkpoints of view '"
          + viewLocation + "' under " + root + ": " + e.getMessage(), e);
    }
    return out;
  }

  private boolean dataFilesExist(FileSystem fs, Checkpoint c) throws IOException {
    Path data = hadoopPath(viewLocation + "/data");
    for (FragmentMetadata f : FragmentShipping.fromBytes(c.fragments())) {
      for (DataFile file : f.getFiles()) {
        if (!fs.exists(new Path(data, file.getPath()))) {
          return false;
        }
      }
    }
    return true;
  }

  /** Removes every checkpoint of the view (after a commit, nothing is left to resume). */
  void clear() {
    Path root = root();
    try {
      fs(root).delete(root, true);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove resume checkpoints under " + root, e);
    }
  }

  private static byte[] serialize(Checkpoint c) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(c);
    }
    return bytes.toByteArray();
  }

  private static Checkpoint deserialize(byte[] bytes) throws IOException {
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
      return (Checkpoint) in.readObject();
    } catch (ClassNotFoundException | ClassCastException e) {
      throw new IOException("not a UDTF checkpoint: " + e, e);
    }
  }
}
