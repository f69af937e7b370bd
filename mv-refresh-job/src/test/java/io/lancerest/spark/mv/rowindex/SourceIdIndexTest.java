package io.lancerest.spark.mv.rowindex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A fragment's source id index answers, for every id, exactly the rows a scan of the fragment's
 * {@code __source_row_id} would find it in, and nothing for the ids it does not hold.
 */
class SourceIdIndexTest {
  /** The rows of {@code id} in {@code ids[from..to)} by a linear search. */
  private static long[] scanned(long[] ids, int from, int to, long id) {
    int first = -1;
    int end = -1;
    for (int i = from; i < to; i++) {
      if (ids[i] == id) {
        if (first < 0) {
          first = i - from;
        }
        end = i - from + 1;
      }
    }
    return first < 0 ? null : new long[] {first, end};
  }

  private static void assertSameAsScan(long[] ids, int from, int to, SourceIdIndex index,
      long[] probes) {
    for (long p : probes) {
      assertArrayEquals(scanned(ids, from, to, p), index.rowsOf(p), "id " + p);
    }
  }

  @Test
  void oneRowPerIdWithHolesAndIdsAbove32Bits() throws IOException {
    Random r = new Random(7);
    long[] ids = new long[50_000];
    long next = (1L << 32) - 20_000; // crosses into the next 32-bit part
    for (int i = 0; i < ids.length; i++) {
      next += 1 + (r.nextInt(10) == 0 ? r.nextInt(50) : 0);
      ids[i] = next;
    }
    SourceIdIndex index = SourceIdIndex.of(ids, 0, ids.length);
    assertEquals(ids.length, index.rows());
    assertEquals(ids.length, index.ids());
    long[] probes = new long[2000];
    for (int i = 0; i < probes.length; i++) {
      probes[i] = i % 2 == 0 ? ids[r.nextInt(ids.length)] : ids[0] + r.nextInt(600_000) - 10;
    }
    assertSameAsScan(ids, 0, ids.length, index, probes);
    SourceIdIndex back = SourceIdIndex.parse(index.toBytes());
    assertSameAsScan(ids, 0, ids.length, back, probes);
    assertTrue(index.toBytes().length < ids.length, "compressed: " + index.toBytes().length);
  }

  @Test
  void runsOfRowsPerIdAsAChunkerWritesThem() throws IOException {
    // parents 10, 11, 13 with 3, 1 and 5 children, in a slice of a longer stream
    long[] stream = {99, 10, 10, 10, 11, 13, 13, 13, 13, 13, 500};
    SourceIdIndex index = SourceIdIndex.of(stream, 1, 10);
    assertEquals(9, index.rows());
    assertEquals(3, index.ids());
    long[] probes = {9, 10, 11, 12, 13, 14, 99, 500};
    assertSameAsScan(stream, 1, 10, index, probes);
    assertSameAsScan(stream, 1, 10, SourceIdIndex.parse(index.toBytes()), probes);
  }

  @Test
  void hitsAreTheRowsOfTheWantedIdsTheFragmentHolds() throws Exception {
    long[] ids = {3, 5, 5, 9, (1L << 32) + 1, (1L << 32) + 1, (1L << 32) + 7};
    SourceIdIndex index = SourceIdIndex.of(ids, 0, ids.length);
    org.roaringbitmap.longlong.Roaring64NavigableMap want =
        org.roaringbitmap.longlong.Roaring64NavigableMap.bitmapOf(1, 5, 9, 10, (1L << 32) + 1,
            (2L << 32) + 1, -4);
    java.util.List<String> got = new java.util.ArrayList<>();
    index.hits(SourceIdIndex.Wanted.of(want), (id, first, end) -> got.add(id + ":" + first
        + "-" + end));
    java.util.List<String> expected = new java.util.ArrayList<>();
    for (long p : new long[] {5, 9, (1L << 32) + 1}) {
      long[] r = scanned(ids, 0, ids.length, p);
      expected.add(p + ":" + r[0] + "-" + r[1]);
    }
    assertEquals(expected, got);
  }

  @Test
  void idsThatDecreaseOrAreNegativeGetNoIndex() {
    assertNull(SourceIdIndex.of(new long[] {1, 2, 5, 4}, 0, 4));
    assertNull(SourceIdIndex.of(new long[] {-1, 2}, 0, 2));
    assertEquals(0, SourceIdIndex.of(new long[] {}, 0, 0).ids());
    assertNull(SourceIdIndex.of(new long[] {3, 7}, 0, 2).rowsOf(-3));
  }

  @Test
  void bytesThatAreNotAnIndexAreRefused() {
    byte[] good = SourceIdIndex.of(new long[] {1, 2, 3}, 0, 3).toBytes();
    IOException e = assertThrows(IOException.class,
        () -> SourceIdIndex.parse(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
    assertTrue(e.getMessage().contains("not a source id index"), e.getMessage());
    assertThrows(IOException.class,
        () -> SourceIdIndex.parse(Arrays.copyOf(good, good.length - 3)));
    byte[] otherRows = good.clone();
    otherRows[15] = 9; // the row count no longer matches the ids
    e = assertThrows(IOException.class, () -> SourceIdIndex.parse(otherRows));
    assertTrue(e.getMessage().contains("does not cover"), e.getMessage());
  }
}
