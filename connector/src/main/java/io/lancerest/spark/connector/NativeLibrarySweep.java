package io.lancerest.spark.connector;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the copies of lance-core's native library that dead JVMs left in the temp directory.
 *
 * <p>lance-core 4.0.0 loads its JNI library through jar-jni 1.1.1 ({@code
 * JarJniLoader.loadLib(Dataset.class, "/nativelib", "lance_jni")}), which copies the library
 * (about 150 MiB) out of the jar into {@code File.createTempFile("liblance_jni", ".so")} in
 * {@code java.io.tmpdir} on every load, and deletes it only on a normal exit ({@code
 * deleteOnExit}). It has no setting for a fixed or shared path, so a copy cannot be reused; a
 * killed JVM leaves its copy behind. This sweep deletes such copies: files of that name owned by
 * this user, older than {@link #MIN_AGE} (a copy being written now is younger), and mapped by no
 * running process ({@code /proc/<pid>/maps}). On a system without {@code /proc} it does nothing.
 */
public final class NativeLibrarySweep {
  private static final Logger LOG = LoggerFactory.getLogger(NativeLibrarySweep.class);
  /** jar-jni's temp file: prefix, the random number File.createTempFile adds, suffix. */
  static final Pattern COPY = Pattern.compile("liblance_jni\\d+\\.so");
  /** A copy younger than this may still be being written by a JVM that is starting. */
  static final Duration MIN_AGE = Duration.ofMinutes(10);

  /** What a sweep removed. */
  public record Swept(List<Path> removed, long bytes) {}

  private NativeLibrarySweep() {}

  /**
   * Sweeps {@code java.io.tmpdir}; never throws (a copy that cannot be removed stays). Logs at
   * INFO what it removed.
   */
  public static Swept sweepTempDir() {
    try {
      Path proc = Path.of("/proc");
      if (!Files.isDirectory(proc.resolve("self"))) {
        return new Swept(List.of(), 0);
      }
      Path dir = Path.of(System.getProperty("java.io.tmpdir"));
      List<Path> candidates = candidates(dir, Instant.now());
      if (candidates.isEmpty()) {
        return new Swept(List.of(), 0);
      }
      Swept s = sweep(candidates, mapped(proc));
      if (!s.removed().isEmpty()) {
        LOG.info("Removed {} copies of lance-core's native library ({} MiB) that ended processes "
            + "left in {}", s.removed().size(), s.bytes() >> 20, dir);
      }
      return s;
    } catch (IOException | RuntimeException e) {
      LOG.debug("Native library sweep skipped: {}", e.toString());
      return new Swept(List.of(), 0);
    }
  }

  /** The copies in {@code dir} this user owns that are older than {@link #MIN_AGE}. */
  static List<Path> candidates(Path dir, Instant now) throws IOException {
    List<Path> out = new ArrayList<>();
    String user = System.getProperty("user.name");
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "liblance_jni*.so")) {
      for (Path p : ds) {
        if (COPY.matcher(p.getFileName().toString()).matches() && Files.isRegularFile(p)
            && Files.getLastModifiedTime(p).toInstant().isBefore(now.minus(MIN_AGE))
            && Files.getOwner(p).getName().equals(user)) {
          out.add(p);
        }
      }
    }
    return out;
  }

  /** Deletes the candidates no process maps. */
  static Swept sweep(List<Path> candidates, Set<Path> inUse) {
    List<Path> removed = new ArrayList<>();
    long bytes = 0;
    for (Path p : candidates) {
      if (inUse.contains(p.toAbsolutePath().normalize())) {
        continue;
      }
      try {
        long size = Files.size(p);
        if (Files.deleteIfExists(p)) {
          removed.add(p);
          bytes += size;
        }
      } catch (IOException e) {
        LOG.debug("Cannot remove {}: {}", p, e.toString());
      }
    }
    return new Swept(removed, bytes);
  }

  /** The library copies mapped by the processes whose maps this user may read. */
  static Set<Path> mapped(Path proc) throws IOException {
    Set<Path> out = new HashSet<>();
    try (Stream<Path> pids = Files.list(proc)) {
      for (Path pid : (Iterable<Path>) pids::iterator) {
        if (!pid.getFileName().toString().chars().allMatch(Character::isDigit)) {
          continue;
        }
        try (Stream<String> lines = Files.lines(pid.resolve("maps"),
            StandardCharsets.ISO_8859_1)) {
          lines.filter(l -> l.contains("liblance_jni")).forEach(l -> {
            int slash = l.indexOf('/');
            if (slash >= 0) {
              out.add(Path.of(l.substring(slash).replace(" (deleted)", "")).normalize());
            }
          });
        } catch (IOException | java.io.UncheckedIOException | SecurityException e) {
          // ended meanwhile, or another user's: its copies are not ours to remove
        }
      }
    }
    return out;
  }
}
