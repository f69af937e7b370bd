package io.lancerest.spark.mv.chunker;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Base64;
import java.util.List;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Sets of source row ids as 64-bit roaring bitmaps (the portable format of the roaring
 * specification, which Spark ships). Stable row ids are mostly dense and ascending, so even
 * millions of parents compress to a few runs.
 */
final class ParentIds {
  private ParentIds() {}

  static Roaring64NavigableMap empty() {
    return new Roaring64NavigableMap();
  }

  static byte[] toBytes(Roaring64NavigableMap ids) {
    ids.runOptimize();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      ids.serializePortable(out);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot serialise row id set", e);
    }
    return bytes.toByteArray();
  }

  static Roaring64NavigableMap fromBytes(byte[] bytes) {
    Roaring64NavigableMap ids = new Roaring64NavigableMap();
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      ids.deserializePortable(in);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read row id set", e);
    }
    return ids;
  }

  static String toBase64(Roaring64NavigableMap ids) {
    return Base64.getEncoder().encodeToString(toBytes(ids));
  }

  /** Reads a stored set; {@code null} or empty is the empty set. */
  static Roaring64NavigableMap fromBase64(String value, String what) {
    if (value == null || value.isEmpty()) {
      return empty();
    }
    try {
      return fromBytes(Base64.getDecoder().decode(value));
    } catch (RuntimeException e) {
      throw new ChunkerRefreshException("The view's stored " + what + " cannot be read ("
          + e.getMessage() + "); the view table's config was altered. Run the refresh with "
          + "force = true: it rebuilds the view and writes its state anew", e);
    }
  }

  static Roaring64NavigableMap minus(Roaring64NavigableMap a, Roaring64NavigableMap b) {
    Roaring64NavigableMap out = copy(a);
    out.andNot(b);
    return out;
  }

  static Roaring64NavigableMap and(Roaring64NavigableMap a, Roaring64NavigableMap b) {
    Roaring64NavigableMap out = copy(a);
    out.and(b);
    return out;
  }

  static Roaring64NavigableMap or(Roaring64NavigableMap a, Roaring64NavigableMap b) {
    Roaring64NavigableMap out = copy(a);
    out.or(b);
    return out;
  }

  static Roaring64NavigableMap copy(Roaring64NavigableMap a) {
    Roaring64NavigableMap out = new Roaring64NavigableMap();
    out.or(a);
    return out;
  }

  /**
   * The set as inclusive ranges {@code [from, to]}, or {@code null} when it has more than
   * {@code maxRanges} of them.
   */
  static List<long[]> ranges(Roaring64NavigableMap ids, int maxRanges) {
    return io.lancerest.spark.mv.rowindex.IdRuns.of(ids, maxRanges);
  }
}
