package io.lancerest.spark.mv.rowindex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    SourceIdIndexFiles.write(view, Map.of(), a, f, index);
    Path folder = dir.resolve("v.lance/_mv/source_ids/aaaa");
    assertTrue(Files.isRegularFile(folder.resolve("index.lance")));
    SourceIdIndex back = SourceIdIndexFiles.read(view, Map.of(), a, f);
    assertNotNull(back);
    assertArrayEquals(new long[] {2, 3}, back.rowsOf(9));
    // another fragment (another data file, or the same file with another row count) gets none
    assertNull(SourceIdIndexFiles.read(view, Map.of(), a, fragment(3, "bbbb.lance", 4)));
    assertNull(SourceIdIndexFiles.read(view, Map.of(), a, fragment(3, "aaaa.lance", 5)));
    SourceIdIndexFiles.drop(view, Map.of(), List.of(f, fragment(4, "never-indexed.lance", 1)));
    assertFalse(Files.exists(folder));
    assertNull(SourceIdIndexFiles.read(view, Map.of(), a, f));
  }

  @Test
  void aDamagedIndexIsIgnored() throws Exception {
    String view = dir.resolve("v.lance").toString();
    FragmentMetadata f = fragment(0, "cccc.lance", 2);
    SourceIdIndexFiles.write(view, Map.of(), a, f, SourceIdIndex.of(new long[] {1, 2}, 0, 2));
    Path file = dir.resolve("v.lance/_mv/source_ids/cccc/index.lance");
    Files.write(file, new byte[] {1, 2, 3});
    assertNull(SourceIdIndexFiles.read(view, Map.of(), a, f));
  }
}
