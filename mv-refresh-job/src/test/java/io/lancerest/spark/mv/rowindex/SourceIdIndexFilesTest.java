package io.lancerest.spark.mv.rowindex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.FragmentMetadata;
import org.lance.fragment.DataFile;

/**
 * An index file belongs to exactly one data file: it is read back for that fragment, ignored
 * for any other (and when missing or damaged), and removed with the fragment.
 */
class SourceIdIndexFilesTest {
  private static BufferAllocator a;
  @TempDir Path dir;

  @BeforeAll
  static void open() {
    a = new RootAllocator();
  }

  @AfterAll
  static void close() {
    a.close();
  }

  private static FragmentMetadata fragment(int id, String file, long rows) {
    return new FragmentMetadata(id, List.of(new DataFile(file, new int[] {0}, new int[] {0}, 2,
        0, null, null)), rows, null, null);
  }

  @Test
  void writtenReadAndDroppedWithItsFragment() throws Exception {
    String view = dir.resolve("v.lance").toString();
    FragmentMetadata f = fragment(3, "aaaa.lance", 4);
    SourceIdIndex index = SourceIdIndex.of(new long[] {5, 6, 9, 10}, 0, 4);
    SourceIdIndexFiles.write(LanceLocation.of(view, Map.of()), a, f, index);
    Path folder = dir.resolve("v.lance/_mv/source_ids/aaaa");
    assertTrue(Files.isRegularFile(folder.resolve("index.lance")));
    SourceIdIndex back = SourceIdIndexFiles.read(LanceLocation.of(view, Map.of()), a, f);
    assertNotNull(back);
    assertArrayEquals(new long[] {2, 3}, back.rowsOf(9));
    // another fragment (another data file, or the same file with another row count) gets none
    assertNull(SourceIdIndexFiles.read(LanceLocation.of(view, Map.of()), a, fragment(3, "bbbb.lance", 4)));
    assertNull(SourceIdIndexFiles.read(LanceLocation.of(view, Map.of()), a, fragment(3, "aaaa.lance", 5)));
    SourceIdIndexFiles.drop(LanceLocation.of(view, Map.of()), List.of(f, fragment(4, "never-indexed.lance", 1)));
    assertFalse(Files.exists(folder));
    assertNull(SourceIdIndexFiles.read(LanceLocation.of(view, Map.of()), a, f));
  }

  @Test
  void aSweepRemovesOnlyOldFoldersOfFragmentsTheViewDoesNotHold() throws Exception {
    String view = dir.resolve("v.lance").toString();
    FragmentMetadata current = fragment(0, "kept.lance", 2);
    FragmentMetadata gone = fragment(1, "gone.lance", 2);
    FragmentMetadata fresh = fragment(2, "fresh.lance", 2);
    for (FragmentMetadata f : List.of(current, gone, fresh)) {
      SourceIdIndexFiles.write(LanceLocation.of(view, Map.of()), a, f, SourceIdIndex.of(new long[] {1, 2}, 0, 2));
    }
    Path root = dir.resolve("v.lance/_mv/source_ids");
    java.nio.file.attribute.FileTime old = java.nio.file.attribute.FileTime.fromMillis(
        System.currentTimeMillis() - 7_200_000);
    Files.setLastModifiedTime(root.resolve("kept"), old);
    Files.setLastModifiedTime(root.resolve("gone"), old);
    assertEquals(1, SourceIdIndexFiles.sweep(view, List.of(current),
        java.time.Duration.ofHours(1)));
    assertTrue(Files.isDirectory(root.resolve("kept")), "held by the view");
    assertFalse(Files.exists(root.resolve("gone")));
    assertTrue(Files.isDirectory(root.resolve("fresh")), "may still be about to be committed");
    assertEquals(0, SourceIdIndexFiles.sweep("s3://bucket/v.lance", List.of(),
        java.time.Duration.ZERO), "object stores are not listed");
  }

  @Test
  void aDamagedIndexIsIgnored() throws Exception {
    String view = dir.resolve("v.lance").toString();
    FragmentMetadata f = fragment(0, "cccc.lance", 2);
    SourceIdIndexFiles.write(LanceLocation.of(view, Map.of()), a, f, SourceIdIndex.of(new long[] {1, 2}, 0, 2));
    Path file = dir.resolve("v.lance/_mv/source_ids/cccc/index.lance");
    Files.write(file, new byte[] {1, 2, 3});
    assertNull(SourceIdIndexFiles.read(LanceLocation.of(view, Map.of()), a, f));
  }
}
