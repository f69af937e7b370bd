package io.lancerest.spark.mv.rowindex;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.RoaringBitmapWriter;

/**
 * Which physical rows of one view fragment hold which source row ids: the fragment's {@code
 * __source_row_id}s, ascending in physical order, kept as a compressed set, so that the rows of
 * a source row id are found by its rank in the set, without reading the fragment.
 *
 * <p>A query view has one row per source row, so the row of the {@code k}-th smallest id is
 * row {@code k}. A chunker view has a run of rows (the children) per source row, and the index
 * also keeps where each run ends. Only a fragment whose ids never decrease from one row to the
 * next has an index ({@link #of} answers {@code null} otherwise); refreshes write their rows in
 * source order, so nearly every fragment qualifies.
 *
 * <p>Size: about 1/8 byte per id in dense runs and 2 bytes per id where ids are scattered
 * (roaring containers), against 8 bytes per row of the column itself; for a million-row fragment
 * of a view that keeps nine source rows in ten, about 130 KB.
 */
public final class SourceIdIndex {
  private static final int MAGIC = 0x4c525349; // "LRSI"
  private static final int FORMAT = 1;

  /** The high 32 bits of the ids of each part, ascending. */
  private final int[] highs;
  /** The low 32 bits of the ids whose high bits are {@code highs[k]}. */
  private final RoaringBitmap[] lows;
  /** Ids in the parts before part {@code k}. */
  private final long[] before;
  /** Exclusive end row of the run of the {@code k}-th id; {@code null}: one row per id. */
  private final int[] ends;
  private final long rows;

  private SourceIdIndex(int[] highs, RoaringBitmap[] lows, int[] ends, long rows) {
    this.highs = highs;
    this.lows = lows;
    this.ends = ends;
    this.rows = rows;
    this.before = new long[lows.length];
    long n = 0;
    for (int k = 0; k < lows.length; k++) {
      before[k] = n;
      n += lows[k].getLongCardinality();
    }
  }

  /**
   * The index of a fragment whose rows hold {@code ids[from..to)} in physical order, or {@code
   * null} when they decrease somewhere, or an id is negative (unsigned ids of 2^63 and more).
   */
  public static SourceIdIndex of(long[] ids, int from, int to) {
    Builder b = new Builder();
    for (int i = from; i < to && b.add(ids[i]); i++) {
      // add() answers false once the ids cannot be indexed
    }
    return b.build();
  }

  /**
   * Builds an index from a fragment's source ids, one row at a time in physical order. Cheap per
   * row (ids arrive sorted, which is roaring's fast path), and the run ends are only kept once
   * an id has more than one row.
   */
  public static final class Builder {
    private final List<Integer> highs = new ArrayList<>();
    private final List<RoaringBitmap> lows = new ArrayList<>();
    private RoaringBitmapWriter<RoaringBitmap> w;
    private int high;
    private long prev = -1;
    private long first = -1;
    private int rows;
    private int distinct;
    /** Exclusive end row of each distinct id's run, once some id had more than one row. */
    private int[] ends;
    private boolean failed;

    /** Adds the next row's id; {@code false} once the rows cannot be indexed. */
    public boolean add(long id) {
      if (failed) {
        return false;
      }
      if (id < 0 || id < prev) {
        failed = true;
        return false;
      }
      if (id == prev) {
        if (ends == null) {
          ends = new int[Math.max(16, distinct * 2)];
          for (int i = 0; i < distinct; i++) {
            ends[i] = i + 1; // one row each so far
          }
        }
        ends[distinct - 1] = ++rows;
        return true;
      }
      int h = (int) (id >>> 32);
      if (w == null || h != high) {
        if (w != null) {
          lows.add(w.get());
        }
        highs.add(h);
        high = h;
        w = RoaringBitmapWriter.writer().runCompress(true).get();
      }
      w.add((int) id);
      if (first < 0) {
        first = id;
      }
      prev = id;
      rows++;
      if (ends != null) {
        if (distinct == ends.length) {
          ends = Arrays.copyOf(ends, distinct * 2);
        }
        ends[distinct] = rows;
      }
      distinct++;
      return true;
    }

    /** The smallest and the largest id added, when every add succeeded and there was one. */
    public long[] range() {
      return failed || first < 0 ? null : new long[] {first, prev};
    }

    /** The index, or {@code null} when an id could not be indexed. */
    public SourceIdIndex build() {
      if (failed) {
        return null;
      }
      List<RoaringBitmap> parts = new ArrayList<>(lows);
      if (w != null) {
        parts.add(w.get());
      }
      RoaringBitmap[] bitmaps = parts.toArray(new RoaringBitmap[0]);
      for (RoaringBitmap p : bitmaps) {
        p.runOptimize();
      }
      return new SourceIdIndex(highs.stream().mapToInt(Integer::intValue).toArray(), bitmaps,
          ends == null ? null : Arrays.copyOf(ends, distinct), rows);
    }
  }

  /** About what the index takes in memory. */
  public long sizeInBytes() {
    long n = 64L + 16L * lows.length + (ends == null ? 0 : 4L * ends.length);
    for (RoaringBitmap b : lows) {
      n += b.getLongSizeInBytes();
    }
    return n;
  }

  /** Physical rows of the fragment. */
  public long rows() {
    return rows;
  }

  /** Distinct source row ids. */
  public long ids() {
    return lows.length == 0 ? 0 : before[lows.length - 1] + lows[lows.length - 1]
        .getLongCardinality();
  }

  /**
   * The rows holding source row id {@code id}, as {@code {first, end}} (end exclusive), or
   * {@code null} when the fragment has none.
   */
  public long[] rowsOf(long id) {
    if (id < 0) {
      return null;
    }
    int k = Arrays.binarySearch(highs, (int) (id >>> 32));
    if (k < 0 || !lows[k].contains((int) id)) {
      return null;
    }
    long rank = before[k] + lows[k].rankLong((int) id) - 1; // 0-based among the ids
    if (ends == null) {
      return new long[] {rank, rank + 1};
    }
    int r = (int) rank;
    return new long[] {r == 0 ? 0 : ends[r - 1], ends[r]};
  }

  /** Source row ids a lookup wants, split by their high 32 bits as an index keeps its ids. */
  public static final class Wanted {
    private final java.util.Map<Integer, RoaringBitmap> parts = new java.util.HashMap<>();

    /** {@code ids}, split once for every fragment the lookup asks. */
    public static Wanted of(org.roaringbitmap.longlong.Roaring64NavigableMap ids) {
      Wanted w = new Wanted();
      RoaringBitmapWriter<RoaringBitmap> writer = null;
      int high = 0;
      for (org.roaringbitmap.longlong.LongIterator it = ids.getLongIterator(); it.hasNext(); ) {
        long id = it.next();
        if (id < 0) {
          continue; // an index holds no such id
        }
        int h = (int) (id >>> 32);
        if (writer == null || h != high) {
          if (writer != null) {
            w.parts.merge(high, writer.get(), (x, y) -> RoaringBitmap.or(x, y));
          }
          high = h;
          writer = RoaringBitmapWriter.writer().get();
        }
        writer.add((int) id);
      }
      if (writer != null) {
        w.parts.merge(high, writer.get(), (x, y) -> RoaringBitmap.or(x, y));
      }
      return w;
    }
  }

  /** Receives the rows {@code [first, end)} of each wanted id a fragment holds. */
  @FunctionalInterface
  public interface Hits {
    void rows(long id, long first, long end) throws Exception;
  }

  /**
   * The rows of every id of {@code wanted} this fragment holds, in id order. The wanted set and
   * the fragment's are intersected part by part (roaring's containers), so the cost follows the
   * ids both hold, not the ids wanted.
   */
  public void hits(Wanted wanted, Hits out) throws Exception {
    for (int k = 0; k < highs.length; k++) {
      RoaringBitmap want = wanted.parts.get(highs[k]);
      if (want == null) {
        continue;
      }
      RoaringBitmap both = RoaringBitmap.and(want, lows[k]);
      long high = ((long) highs[k]) << 32;
      for (org.roaringbitmap.IntIterator it = both.getIntIterator(); it.hasNext(); ) {
        int low = it.next();
        long rank = before[k] + lows[k].rankLong(low) - 1;
        long first;
        long end;
        if (ends == null) {
          first = rank;
          end = rank + 1;
        } else {
          int r = (int) rank;
          first = r == 0 ? 0 : ends[r - 1];
          end = ends[r];
        }
        out.rows(high | Integer.toUnsignedLong(low), first, end);
      }
    }
  }

  /** The index as bytes ({@link #parse} reads them back). */
  public byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(MAGIC);
      out.writeInt(FORMAT);
      out.writeLong(rows);
      out.writeInt(highs.length);
      for (int k = 0; k < highs.length; k++) {
        out.writeInt(highs[k]);
        lows[k].serialize(out);
      }
      out.writeBoolean(ends != null);
      if (ends != null) {
        out.writeInt(ends.length);
        int last = 0;
        for (int e : ends) {
          writeVarint(out, e - last); // runs are short: one byte each, mostly
          last = e;
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("Cannot serialise a source id index: " + e, e);
    }
    return bytes.toByteArray();
  }

  /** The index {@link #toBytes} wrote; an {@link IOException} for anything else. */
  public static SourceIdIndex parse(byte[] bytes) throws IOException {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      if (in.readInt() != MAGIC) {
        throw new IOException("not a source id index");
      }
      int format = in.readInt();
      if (format != FORMAT) {
        throw new IOException("source id index format " + format + ", this version reads "
            + FORMAT);
      }
      long rows = in.readLong();
      int parts = in.readInt();
      if (parts < 0 || parts > bytes.length) {
        throw new IOException("source id index with " + parts + " parts");
      }
      int[] highs = new int[parts];
      RoaringBitmap[] lows = new RoaringBitmap[parts];
      for (int k = 0; k < parts; k++) {
        highs[k] = in.readInt();
        lows[k] = new RoaringBitmap();
        lows[k].deserialize(in);
      }
      int[] ends = null;
      if (in.readBoolean()) {
        int n = in.readInt();
        if (n < 0 || n > rows) {
          throw new IOException("source id index with " + n + " runs for " + rows + " rows");
        }
        ends = new int[n];
        int last = 0;
        for (int i = 0; i < n; i++) {
          last += readVarint(in);
          ends[i] = last;
        }
      }
      SourceIdIndex index = new SourceIdIndex(highs, lows, ends, rows);
      long expected = ends == null ? rows : ends.length;
      if (index.ids() != expected || ends != null && n(ends) != rows) {
        throw new IOException("source id index of " + index.ids() + " ids does not cover its "
            + rows + " rows");
      }
      return index;
    } catch (RuntimeException e) {
      throw new IOException("unreadable source id index: " + e, e);
    }
  }

  private static long n(int[] ends) {
    return ends.length == 0 ? 0 : ends[ends.length - 1];
  }

  private static void writeVarint(DataOutputStream out, int v) throws IOException {
    while ((v & ~0x7f) != 0) {
      out.writeByte((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.writeByte(v);
  }

  private static int readVarint(DataInputStream in) throws IOException {
    int v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      int b = in.readUnsignedByte();
      v |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    throw new IOException("malformed run length in a source id index");
  }
}
