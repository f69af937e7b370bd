package io.lancerest.spark.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeLibrarySweepTest {
  @TempDir
  Path dir;

  @Test
  void onlyOldCopiesNoProcessMapsAreRemoved() throws IOException {
    Instant now = Instant.now();
    Path dead = copy("liblance_jni111.so", now.minus(Duration.ofHours(2)));
    Path starting = copy("liblance_jni222.so", now.minus(Duration.ofMinutes(1)));
    Path running = copy("liblance_jni333.so", now.minus(Duration.ofHours(3)));
    Path other = copy("liblance_jni_notes.so", now.minus(Duration.ofHours(3)));

    List<Path> candidates = NativeLibrarySweep.candidates(dir, now);
    assertEquals(Set.of(dead, running), Set.copyOf(candidates));
    NativeLibrarySweep.Swept s = NativeLibrarySweep.sweep(candidates,
        Set.of(running.toAbsolutePath().normalize()));
    assertEquals(List.of(dead), s.removed());
    assertEquals(4, s.bytes());
    assertFalse(Files.exists(dead));
    assertTrue(Files.exists(starting) && Files.exists(running) && Files.exists(other));
  }

  @Test
  void theCopyThisJvmLoadedIsSeenMappedAndKept() throws IOException {
    org.lance.JniLoader.ensureLoaded();
    Path tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().normalize();
    Set<Path> mapped = NativeLibrarySweep.mapped(Path.of("/proc"));
    assertTrue(mapped.stream().anyMatch(p -> p.getParent().equals(tmp)
        && NativeLibrarySweep.COPY.matcher(p.getFileName().toString()).matches()),
        "no liblance_jni copy of " + tmp + " among the mapped " + mapped);
    String self = Files.readString(Path.of("/proc/self/maps"));
    List<Path> ours = mapped.stream().filter(p -> self.contains(p.toString())).toList();
    assertFalse(ours.isEmpty(), "this JVM's copy is not among " + mapped);
    NativeLibrarySweep.sweepTempDir();
    assertTrue(ours.stream().allMatch(Files::exists), "this JVM's copy was removed: " + ours);
  }

  private Path copy(String name, Instant modified) throws IOException {
    Path p = Files.writeString(dir.resolve(name), "elf!");
    Files.setLastModifiedTime(p, FileTime.from(modified));
    return p;
  }
}
