package io.lancerest.spark.mv.query;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import org.roaringbitmap.longlong.LongIterator;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Row-id sets for the query refresh, as 64-bit roaring bitmaps. Stable row ids are dense and
 * ascending, so millions of ids compress to a few runs; tasks ship them to the driver (and the
 * driver to tasks) in roaring's portable byte format.
 */
final class RowIdSet {
  private RowIdSet() {}

  static byte[] serialize(Roaring64NavigableMap ids) {
    ids.runOptimize();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      ids.serializePortable(out);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot serialise a row id set", e);
    }
    return bytes.toByteArray();
  }

  static Roaring64NavigableMap deserialize(byte[] bytes) {
    Roaring64NavigableMap ids = new Roaring64NavigableMap();
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      ids.deserializePortable(in);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read a row id set", e);
    }
    return ids;
  }

  /** {@code a − b} as a new set. */
  static Roaring64NavigableMap difference(Roaring64NavigableMap a, Roaring64NavigableMap b) {
    Roaring64NavigableMap out = Roaring64NavigableMap.bitmapOf();
    out.or(a);
    out.andNot(b);
    return out;
  }

  /** {@code a ∩ b} as a new set. */
  static Roaring64NavigableMap intersection(Roaring64NavigableMap a, Roaring64NavigableMap b) {
    Roaring64NavigableMap out = Roaring64NavigableMap.bitmapOf();
    out.or(a);
    out.and(b);
    return out;
  }

  /** The {@code n} smallest ids of {@code ids}. */
  static Roaring64NavigableMap smallest(Roaring64NavigableMap ids, long n) {
    Roaring64NavigableMap out = Roaring64NavigableMap.bitmapOf();
    LongIterator it = ids.getLongIterator();
    for (long i = 0; i < n && it.hasNext(); i++) {
      out.addLong(it.next());
    }
    return out;
  }

  /** Inclusive runs {@code [from, to]}; {@code null} when there are more than {@code max}. */
  static List<long[]> runs(Roaring64NavigableMap ids, int max) {
    return io.lancerest.spark.mv.rowindex.IdRuns.of(ids, max);
  }
}
