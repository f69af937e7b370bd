package io.lancerest.spark.mv.fragments;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads the plain-range form of a Lance row-id sequence (lance-core's {@code RowIdMeta}, the
 * stable row ids of a fragment's physical rows in order), without a scan.
 *
 * <p>lance-core 4.0.0 hands the sequence to Java as JSON text: {@code {"Inline":[bytes...]}}
 * with the protobuf {@code lance.table.RowIdSequence} ({@code repeated U64Segment segments =
 * 1}) as a list of byte values, or {@code {"External":...}} for a sequence kept in a file. A
 * freshly written fragment's sequence is one {@code U64Segment.range} ({@code start = 1}, {@code
 * end = 2}, end exclusive). Only that form is read here; every other one (holes, bitmaps,
 * arrays, external files, anything unexpected) gives {@code null} and the caller scans.
 */
final class RowIdSequences {
  private static final String INLINE = "{\"Inline\":[";

  private RowIdSequences() {}

  /** The {@code [start, end)} ranges of the sequence, or {@code null} (see the class comment). */
  static List<long[]> ranges(String json) {
    byte[] b = inlineBytes(json);
    if (b == null) {
      return null;
    }
    List<long[]> out = new ArrayList<>();
    int[] pos = {0};
    while (pos[0] < b.length) {
      long tag = varint(b, pos);
      if (tag != ((1 << 3) | 2)) { // segments = 1, length-delimited
        return null;
      }
      int end = length(b, pos);
      if (end < 0) {
        return null;
      }
      // one U64Segment: only the `range = 1` member is understood
      long segTag = varint(b, pos);
      if (segTag != ((1 << 3) | 2)) {
        return null;
      }
      int rangeEnd = length(b, pos);
      if (rangeEnd != end) {
        return null;
      }
      long start = 0;
      long stop = 0;
      while (pos[0] < rangeEnd) {
        long t = varint(b, pos);
        if (t == ((1 << 3) | 0)) {
          start = varint(b, pos);
        } else if (t == ((2 << 3) | 0)) {
          stop = varint(b, pos);
        } else {
          return null;
        }
        if (pos[0] < 0) {
          return null;
        }
      }
      if (pos[0] != rangeEnd) {
        return null;
      }
      out.add(new long[] {start, stop});
    }
    return out;
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

  /** A protobuf varint at {@code pos[0]}; on a truncated one sets {@code pos[0] = -1}. */
  private static long varint(byte[] b, int[] pos) {
    long v = 0;
    for (int shift = 0; shift < 64 && pos[0] >= 0 && pos[0] < b.length; shift += 7) {
      int x = b[pos[0]++] & 0xff;
      v |= (long) (x & 0x7f) << shift;
      if ((x & 0x80) == 0) {
        return v;
      }
    }
    pos[0] = -1;
    return 0;
  }

  /** Reads a length prefix; the end offset of the field, or -1 when it overruns the bytes. */
  private static int length(byte[] b, int[] pos) {
    long n = varint(b, pos);
    if (pos[0] < 0 || n < 0 || n > b.length - pos[0]) {
      return -1;
    }
    return pos[0] + (int) n;
  }
}
