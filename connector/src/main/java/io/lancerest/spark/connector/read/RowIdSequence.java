package io.lancerest.spark.connector.read;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The stable row ids of a fragment's physical rows, in physical order, decoded from lance-core's
 * {@code RowIdMeta}; what lets a reader map a row address to its row id without asking
 * lance-core for {@code _rowid} (which lance-core 4.0.0 computes in time quadratic in the
 * fragment's rows for every form but plain ranges; see {@link FragmentHazard}).
 *
 * <p>lance-core 4.0.0 hands the sequence to Java as JSON text: {@code {"Inline":[bytes...]}},
 * the protobuf {@code lance.table.RowIdSequence} as a list of byte values, or {@code
 * {"External":...}} for a sequence kept in a file (which lance-core does not write). The
 * protobuf is {@code repeated U64Segment segments = 1}; a segment is one of {@code range = 1}
 * ({@code start = 1}, {@code end = 2}, end exclusive), {@code range_with_holes = 2} (start, end,
 * {@code holes = 3}: the values left out), {@code range_with_bitmap = 3} (start, end, {@code
 * bitmap = 3}: bit {@code i}, least significant first, set when {@code start + i} is present),
 * {@code sorted_array = 4} and {@code array = 5}. Arrays are {@code EncodedU64Array}: one of
 * {@code u16_array = 1} / {@code u32_array = 2} ({@code base = 1} plus little-endian {@code
 * offsets = 2}) or {@code u64_array = 3} (little-endian {@code values = 2}).
 */
public final class RowIdSequence {
  private static final String INLINE = "{\"Inline\":[";

  /** A segment: {@code count} row ids, of which {@link #at} gives the {@code i}-th. */
  private sealed interface Segment {
    long count();

    long at(long i);
  }

  private record Range(long start, long end) implements Segment {
    @Override
    public long count() {
      return end - start;
    }

    @Override
    public long at(long i) {
      return start + i;
    }
  }

  /** Any other form ({@code form}: its protobuf name), expanded once to its values. */
  private record Values(String form, long[] values) implements Segment {
    @Override
    public long count() {
      return values.length;
    }

    @Override
    public long at(long i) {
      return values[(int) i];
    }
  }

  private final List<Segment> segments;
  /** {@code starts[k]}: the physical offset of the first row of segment {@code k}. */
  private final long[] starts;
  private final long length;
  private final boolean plainRanges;

  private RowIdSequence(List<Segment> segments) {
    this.segments = segments;
    this.starts = new long[segments.size()];
    long n = 0;
    boolean plain = true;
    for (int k = 0; k < segments.size(); k++) {
      starts[k] = n;
      n += segments.get(k).count();
      plain &= segments.get(k) instanceof Range;
    }
    this.length = n;
    this.plainRanges = plain;
  }

  /**
   * The sequence of {@code rowIdMeta} ({@code FragmentMetadata.getRowIdMeta().getMetadata()}),
   * or {@code null} when it is not an inline sequence this class can read (an external file,
   * anything malformed).
   */
  public static RowIdSequence parse(String rowIdMeta) {
    byte[] b = inlineBytes(rowIdMeta);
    if (b == null) {
      return null;
    }
    try {
      Reader r = new Reader(b, 0, b.length);
      List<Segment> segments = new ArrayList<>();
      while (r.more()) {
        int tag = r.tag();
        if (tag != field(1, 2)) {
          return null;
        }
        Segment s = segment(r.sub());
        if (s == null) {
          return null;
        }
        segments.add(s);
      }
      return new RowIdSequence(Collections.unmodifiableList(segments));
    } catch (IllegalArgumentException e) {
      return null; // truncated or malformed bytes
    }
  }

  /** Row ids in the sequence: the fragment's physical rows, deleted ones included. */
  public long length() {
    return length;
  }

  /**
   * Whether every segment is a plain range: the one form whose row ids lance-core 4.0.0
   * computes in constant time per row.
   */
  public boolean plainRanges() {
    return plainRanges;
  }

  /**
   * The forms of the segments, in order and without repeats next to each other, e.g. {@code
   * [range, range_with_holes]}: for messages and logs.
   */
  public List<String> forms() {
    List<String> out = new ArrayList<>();
    for (Segment s : segments) {
      String f = s instanceof Values v ? v.form() : "range";
      if (out.isEmpty() || !out.get(out.size() - 1).equals(f)) {
        out.add(f);
      }
    }
    return out;
  }

  /** The row id of the row at physical {@code offset} in the fragment. */
  public long rowIdAt(long offset) {
    if (offset < 0 || offset >= length) {
      throw new IndexOutOfBoundsException("row offset " + offset + " outside the " + length
          + " rows of the fragment");
    }
    int lo = 0;
    int hi = starts.length - 1;
    while (lo < hi) { // last segment starting at or before offset
      int mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= offset) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return segments.get(lo).at(offset - starts[lo]);
  }

  /**
   * The row ids of every physical row as runs of consecutive ids, {@code {first, end}} (end
   * exclusive), in physical order: one run per plain range.
   */
  public List<long[]> runs() {
    List<long[]> out = new ArrayList<>();
    for (Segment s : segments) {
      if (s instanceof Range r) {
        if (r.count() > 0) {
          out.add(new long[] {r.start(), r.end()});
        }
        continue;
      }
      long n = s.count();
      long i = 0;
      while (i < n) {
        long first = s.at(i);
        long j = i + 1;
        while (j < n && s.at(j) == s.at(j - 1) + 1) {
          j++;
        }
        out.add(new long[] {first, first + (j - i)});
        i = j;
      }
    }
    return out;
  }

  /** The row ids of every physical row, in order. */
  public long[] toArray() {
    if (length > Integer.MAX_VALUE) {
      throw new IllegalStateException("a fragment of " + length + " rows");
    }
    long[] out = new long[(int) length];
    int i = 0;
    for (Segment s : segments) {
      for (long j = 0; j < s.count(); j++) {
        out[i++] = s.at(j);
      }
    }
    return out;
  }

  private static Segment segment(Reader r) {
    if (!r.more()) {
      return null;
    }
    int tag = r.tag();
    int kind = tag >>> 3;
    if ((tag & 7) != 2 || kind < 1 || kind > 5) {
      return null;
    }
    Reader body = r.sub();
    if (r.more()) {
      return null; // one member of the oneof, nothing else
    }
    switch (kind) {
      case 1 -> {
        long[] se = startEnd(body, null);
        return se == null ? null : new Range(se[0], se[1]);
      }
      case 2 -> {
        long[][] holes = {null};
        long[] se = startEnd(body, (f, sub) -> holes[0] = array(sub));
        if (se == null || holes[0] == null) {
          return null;
        }
        return new Values("range_with_holes", withoutHoles(se[0], se[1], holes[0]));
      }
      case 3 -> {
        byte[][] bitmap = {null};
        long[] se = startEnd(body, (f, sub) -> bitmap[0] = sub.rest());
        if (se == null || bitmap[0] == null) {
          return null;
        }
        long[] values = fromBitmap(se[0], se[1], bitmap[0]);
        return values == null ? null : new Values("range_with_bitmap", values);
      }
      default -> {
        long[] values = array(body);
        return values == null ? null
            : new Values(kind == 4 ? "sorted_array" : "array", values);
      }
    }
  }

  /** Field 3 of a ranged segment, given as the bytes of its value. */
  private interface Field3 {
    void accept(int field, Reader sub);
  }

  /** {@code {start, end}} of a ranged segment; field 3 (length-delimited) goes to {@code f3}. */
  private static long[] startEnd(Reader r, Field3 f3) {
    long start = 0;
    long end = 0;
    while (r.more()) {
      int tag = r.tag();
      if (tag == field(1, 0)) {
        start = r.varint();
      } else if (tag == field(2, 0)) {
        end = r.varint();
      } else if (tag == field(3, 2) && f3 != null) {
        f3.accept(3, r.sub());
      } else {
        return null;
      }
    }
    if (end < start || end - start > Integer.MAX_VALUE) {
      return null;
    }
    return new long[] {start, end};
  }

  private static long[] withoutHoles(long start, long end, long[] holes) {
    long[] sorted = holes.clone();
    java.util.Arrays.sort(sorted);
    long[] out = new long[(int) (end - start)];
    int n = 0;
    int h = 0;
    for (long v = start; v < end; v++) {
      while (h < sorted.length && sorted[h] < v) {
        h++;
      }
      if (h < sorted.length && sorted[h] == v) {
        continue;
      }
      out[n++] = v;
    }
    return java.util.Arrays.copyOf(out, n);
  }

  private static long[] fromBitmap(long start, long end, byte[] bitmap) {
    int len = (int) (end - start);
    if (bitmap.length < (len + 7) / 8) {
      return null;
    }
    long[] out = new long[len];
    int n = 0;
    for (int i = 0; i < len; i++) {
      if ((bitmap[i >>> 3] & (1 << (i & 7))) != 0) {
        out[n++] = start + i;
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  /** An {@code EncodedU64Array}, or {@code null}. */
  private static long[] array(Reader r) {
    if (!r.more()) {
      return new long[0]; // an empty array has no member set
    }
    int tag = r.tag();
    int kind = tag >>> 3;
    if ((tag & 7) != 2 || kind < 1 || kind > 3) {
      return null;
    }
    Reader body = r.sub();
    if (r.more()) {
      return null;
    }
    long base = 0;
    byte[] bytes = new byte[0];
    while (body.more()) {
      int t = body.tag();
      if (t == field(1, 0) && kind != 3) {
        base = body.varint();
      } else if (t == field(2, 2)) {
        bytes = body.sub().rest();
      } else {
        return null;
      }
    }
    int width = kind == 1 ? 2 : kind == 2 ? 4 : 8;
    if (bytes.length % width != 0) {
      return null;
    }
    long[] out = new long[bytes.length / width];
    for (int i = 0; i < out.length; i++) {
      long v = 0;
      for (int k = width - 1; k >= 0; k--) {
        v = (v << 8) | (bytes[i * width + k] & 0xffL);
      }
      out[i] = base + v;
    }
    return out;
  }

  private static int field(int number, int wireType) {
    return (number << 3) | wireType;
  }

  /** The bytes of {@code {"Inline":[...]}}, or {@code null} for any other text. */
  private static byte[] inlineBytes(String json) {
    if (json == null) {
      return null;
    }
    String s = json.strip();
    if (!s.startsWith(INLINE) || !s.endsWith("]}")) {
      return null;
    }
    String body = s.substring(INLINE.length(), s.length() - 2).strip();
    if (body.isEmpty()) {
      return new byte[0];
    }
    String[] parts = body.split(",");
    byte[] out = new byte[parts.length];
    for (int i = 0; i < parts.length; i++) {
      int v;
      try {
        v = Integer.parseInt(parts[i].strip());
      } catch (NumberFormatException e) {
        return null;
      }
      if (v < 0 || v > 255) {
        return null;
      }
      out[i] = (byte) v;
    }
    return out;
  }

  /** Protobuf wire format over {@code b[pos, end)}; malformed input throws. */
  private static final class Reader {
    private final byte[] b;
    private int pos;
    private final int end;

    Reader(byte[] b, int pos, int end) {
      this.b = b;
      this.pos = pos;
      this.end = end;
    }

    boolean more() {
      return pos < end;
    }

    int tag() {
      long t = varint();
      if (t <= 0 || t > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("bad tag");
      }
      return (int) t;
    }

    long varint() {
      long v = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= end) {
          throw new IllegalArgumentException("truncated varint");
        }
        int x = b[pos++] & 0xff;
        v |= (long) (x & 0x7f) << shift;
        if ((x & 0x80) == 0) {
          return v;
        }
      }
      throw new IllegalArgumentException("overlong varint");
    }

    /** The next length-delimited value. */
    Reader sub() {
      long n = varint();
      if (n < 0 || n > end - pos) {
        throw new IllegalArgumentException("length past the end");
      }
      Reader r = new Reader(b, pos, pos + (int) n);
      pos += (int) n;
      return r;
    }

    byte[] rest() {
      byte[] out = java.util.Arrays.copyOfRange(b, pos, end);
      pos = end;
      return out;
    }
  }
}
