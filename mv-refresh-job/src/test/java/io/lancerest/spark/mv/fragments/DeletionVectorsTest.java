package io.lancerest.spark.mv.fragments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.FragmentMetadata;
import org.lance.fragment.DeletionFileType;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Deletion files read directly give exactly the rows lance-core no longer returns, in both forms
 * lance-core writes (a zstd Arrow IPC array for a few offsets, a roaring bitmap for many), and
 * row ids mapped through the row-id sequence match a scan's.
 */
class DeletionVectorsTest {
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

  private String table(int rows) {
    String uri = dir.resolve("t.lance").toString();
    IdTables.create(a, uri);
    IdTables.append(a, uri, 0, rows);
    return uri;
  }

  /** The offsets of the rows a scan no longer returns. */
  private static RoaringBitmap scannedDeletions(Dataset ds, FragmentMetadata f)
      throws Exception {
    Roaring64NavigableMap live = FragmentDiff.rowIds(ds, List.of(f.getId()));
    RoaringBitmap out = new RoaringBitmap();
    for (int i = 0; i < f.getPhysicalRows(); i++) {
      if (!live.contains(i)) {
        out.add(i); // a fresh table's row ids are its offsets
      }
    }
    return out;
  }

  @Test
  void aFewDeletionsAreAnArrowFile() throws Exception {
    String uri = table(10_000);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id % 1000 = 7 OR id = 42");
    }
    try (Dataset ds = Dataset.open(uri, a)) {
      FragmentMetadata f = ds.getFragments().get(0).metadata();
      assertEquals(DeletionFileType.ARRAY, f.getDeletionFile().getFileType());
      RoaringBitmap read = DeletionVectors.read(uri, f);
      assertEquals(11, read.getCardinality());
      assertEquals(scannedDeletions(ds, f), read);
      Roaring64NavigableMap live = FragmentRowIds.live(uri, f, DeletionVectors.DIRECT);
      assertEquals(FragmentDiff.rowIds(ds, List.of(f.getId())), live);
    }
  }

  @Test
  void manyDeletionsAreABitmapFile() throws Exception {
    String uri = table(20_000);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id % 3 <> 0");
    }
    try (Dataset ds = Dataset.open(uri, a)) {
      FragmentMetadata f = ds.getFragments().get(0).metadata();
      assertEquals(DeletionFileType.BITMAP, f.getDeletionFile().getFileType());
      RoaringBitmap read = DeletionVectors.read("file://" + uri, f);
      assertEquals(13_333, read.getCardinality());
      assertEquals(scannedDeletions(ds, f), read);
    }
  }

  @Test
  void aFragmentWithoutDeletionsHasNone() throws Exception {
    String uri = table(100);
    try (Dataset ds = Dataset.open(uri, a)) {
      assertTrue(DeletionVectors.read(uri, ds.getFragments().get(0).metadata()).isEmpty());
    }
  }

  @Test
  void aDeletionFileOfAnObjectStoreIsNotReadDirectly() throws Exception {
    String uri = table(100);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id = 3");
    }
    try (Dataset ds = Dataset.open(uri, a)) {
      FragmentMetadata f = ds.getFragments().get(0).metadata();
      assertNull(DeletionVectors.read("s3://bucket/t.lance", f));
      assertNull(FragmentRowIds.live("s3://bucket/t.lance", f, DeletionVectors.DIRECT));
    }
  }

  @Test
  void aDeletionFileOfAnotherFormIsScannedInstead() throws Exception {
    String uri = table(100);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id = 3");
    }
    try (Dataset ds = Dataset.open(uri, a)) {
      FragmentMetadata f = ds.getFragments().get(0).metadata();
      try (var files = Files.list(dir.resolve("t.lance").resolve("_deletions"))) {
        for (Path p : files.toList()) {
          Files.write(p, new byte[] {'n', 'o', 't', ' ', 'a', 'r', 'r', 'o', 'w'});
        }
      }
      assertNull(DeletionVectors.read(uri, f), "unreadable: the caller scans");
      assertNull(DeletionVectors.read("file://otherhost" + uri, f), "another host's file");
    }
  }

  @Test
  void aMissingDeletionFileIsAnErrorNamingIt() throws Exception {
    String uri = table(100);
    try (Dataset ds = Dataset.open(uri, a)) {
      ds.delete("id = 3");
    }
    try (Dataset ds = Dataset.open(uri, a)) {
      FragmentMetadata f = ds.getFragments().get(0).metadata();
      try (var files = Files.list(dir.resolve("t.lance").resolve("_deletions"))) {
        for (Path p : files.toList()) {
          Files.delete(p);
        }
      }
      IOException e = assertThrows(IOException.class, () -> DeletionVectors.read(uri, f));
      assertTrue(e.getMessage().contains("_deletions") && e.getMessage().contains("missing"),
          e.getMessage());
    }
  }
}
