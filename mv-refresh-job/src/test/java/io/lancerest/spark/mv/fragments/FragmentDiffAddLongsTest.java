package io.lancerest.spark.mv.fragments;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import java.util.stream.LongStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/** {@link FragmentDiff#addLongs} adds runs as ranges: it must add exactly the given values. */
class FragmentDiffAddLongsTest {

  private static long[] added(FieldVector v, int rows) {
    Roaring64NavigableMap ids = new Roaring64NavigableMap();
    ids.addLong(7_000_000_000L); // existing content is kept
    FragmentDiff.addLongs(v, rows, ids);
    return ids.toArray();
  }

  private static long[] expected(long[] values) {
    return LongStream.concat(LongStream.of(values), LongStream.of(7_000_000_000L)).distinct()
        .sorted().toArray();
  }

  private static void check(BufferAllocator a, long[] values) {
    try (BigIntVector b = new BigIntVector("b", a); UInt8Vector u = new UInt8Vector("u", a)) {
      b.allocateNew(values.length);
      u.allocateNew(values.length);
      for (int i = 0; i < values.length; i++) {
        b.set(i, values[i]);
        u.set(i, values[i]);
      }
      b.setValueCount(values.length);
      u.setValueCount(values.length);
      assertArrayEquals(expected(values), added(b, values.length));
      assertArrayEquals(expected(values), added(u, values.length));
    }
  }

  @Test
  void runsGapsDuplicatesAndDisorderAddExactlyTheValues() {
    try (BufferAllocator a = new RootAllocator()) {
      check(a, new long[0]);
      check(a, new long[] {5});
      check(a, LongStream.range(0, 100_000).toArray());
      // a fragment with deleted rows: runs with holes, one crossing a 2^32 boundary
      check(a, new long[] {1, 2, 3, 5, 6, 9, 4294967294L, 4294967295L, 4294967296L, 4294967297L});
      // not sorted, repeated values, a descending stretch
      check(a, new long[] {10, 11, 12, 3, 4, 4, 5, 2, 1, 0, 12, 13});
      Random r = new Random(42);
      long[] random = new long[5_000];
      long x = 0;
      for (int i = 0; i < random.length; i++) {
        x += r.nextInt(4) == 0 ? 1 + r.nextInt(50) : 1;
        random[i] = x;
      }
      check(a, random);
    }
  }

  @Test
  void aRunEndingAtTheLargestUnsignedValueDoesNotWrap() {
    try (BufferAllocator a = new RootAllocator()) {
      long[] values = {-3L, -2L, -1L, 0L, 1L};
      Roaring64NavigableMap want = new Roaring64NavigableMap();
      for (long v : values) {
        want.addLong(v);
      }
      try (UInt8Vector u = new UInt8Vector("u", a)) {
        u.allocateNew(values.length);
        for (int i = 0; i < values.length; i++) {
          u.set(i, values[i]);
        }
        u.setValueCount(values.length);
        Roaring64NavigableMap got = new Roaring64NavigableMap();
        FragmentDiff.addLongs(u, values.length, got);
        assertEquals(want, got);
        assertEquals(5, got.getLongCardinality());
      }
    }
  }
}
