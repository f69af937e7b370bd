package io.lancerest.spark.mv.fragments;

import io.lancerest.spark.connector.read.RowIdSequence;
import java.io.IOException;
import java.util.List;
import org.lance.FragmentMetadata;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The stable row ids of a fragment's rows, from its metadata and deletion file alone: the row-id
 * sequence gives the id of every physical row, the deletion file the offsets that are gone
 * ({@link DeletionVectors}). No data file is read and nothing is scanned; each method answers
 * {@code null} when that is not enough to tell (a sequence this project cannot decode, a deletion
 * file that is not local: {@link DeletionVectors.Reader}), and the caller scans instead.
 */
public final class FragmentRowIds {
  private FragmentRowIds() {}

  /** The decoded row-id sequence of {@code f}, or {@code null}. */
  static RowIdSequence sequence(FragmentMetadata f) {
    return f == null || f.getRowIdMeta() == null ? null
        : RowIdSequence.parse(f.getRowIdMeta().getMetadata());
  }

  /**
   * Every row id of {@code f}'s sequence, deleted rows included; {@code null} when the sequence
   * cannot be read or is not one id per physical row.
   */
  static Roaring64NavigableMap all(FragmentMetadata f) {
    RowIdSequence seq = sequence(f);
    if (seq == null || seq.length() != f.getPhysicalRows()) {
      return null;
    }
    List<long[]> runs = seq.runs();
    Roaring64NavigableMap ids = new Roaring64NavigableMap();
    long n = 0;
    for (long[] r : runs) {
      if (Long.compareUnsigned(r[0], r[1]) > 0 || r[1] < 0) {
        return null; // not a sane range of ids below 2^63: let the scan tell
      }
      ids.addRange(r[0], r[1]);
      n += r[1] - r[0];
    }
    return n == f.getPhysicalRows() && ids.getLongCardinality() == n ? ids : null;
  }

  /**
   * The ids of the live rows of {@code f} in the dataset at {@code uri}, or {@code null} when
   * they cannot be told without a scan.
   */
  public static Roaring64NavigableMap live(String uri, FragmentMetadata f,
      DeletionVectors.Reader deletions) throws IOException {
    Roaring64NavigableMap ids = all(f);
    if (ids == null || f.getDeletionFile() == null) {
      return ids;
    }
    RoaringBitmap deleted = deletions.read(uri, f);
    if (deleted == null) {
      return null;
    }
    ids.andNot(at(sequence(f), deleted));
    return ids;
  }

  /**
   * The fragments among {@code fragments} whose row-id sequences hold any of {@code ids}
   * (deleted rows included: a row updated in place keeps its id in the fragment it left, and
   * the caller reads both), or {@code null} when a sequence cannot be read or some id is in no
   * sequence. Only metadata is read.
   */
  public static List<Integer> holding(List<FragmentMetadata> fragments,
      Roaring64NavigableMap ids) {
    List<Integer> out = new java.util.ArrayList<>();
    Roaring64NavigableMap found = new Roaring64NavigableMap();
    for (FragmentMetadata f : fragments) {
      RowIdSequence seq = sequence(f);
      if (seq == null) {
        return null;
      }
      boolean holds = false;
      for (long[] r : seq.runs()) {
        if (r[1] <= r[0] || r[0] < 0) {
          continue;
        }
        // ids within [r0, r1): rank up to r1 - 1 less rank below r0
        long in = ids.rankLong(r[1] - 1) - (r[0] == 0 ? 0 : ids.rankLong(r[0] - 1));
        if (in > 0) {
          holds = true;
          Roaring64NavigableMap run = new Roaring64NavigableMap();
          run.addRange(r[0], r[1]);
          run.and(ids);
          found.or(run);
        }
      }
      if (holds) {
        out.add(f.getId());
      }
    }
    return found.getLongCardinality() == ids.getLongCardinality() ? out : null;
  }

  /** The row ids at {@code offsets} of {@code seq}. */
  static Roaring64NavigableMap at(RowIdSequence seq, RoaringBitmap offsets) {
    Roaring64NavigableMap out = new Roaring64NavigableMap();
    for (IntIterator it = offsets.getIntIterator(); it.hasNext(); ) {
      out.addLong(seq.rowIdAt(Integer.toUnsignedLong(it.next())));
    }
    return out;
  }

  /**
   * How the live rows of one fragment changed between two versions at which it has the same data
   * files and sequence ({@link FragmentDiff#deletionsChanged}).
   *
   * @param deleted the ids deleted since the older version
   * @param restored whether rows deleted at the older version are live again (a restore of an
   *     older deletion file): then the fragment is read again like a rewritten one
   */
  public record Deletions(Roaring64NavigableMap deleted, boolean restored) {}

  /**
   * What changed in a fragment's deletions from {@code then} to {@code now} (same fragment, same
   * data), or {@code null} when a deletion file cannot be read directly.
   */
  public static Deletions between(String uri, FragmentMetadata then, FragmentMetadata now,
      DeletionVectors.Reader deletions) throws IOException {
    RowIdSequence seq = sequence(now);
    if (seq == null || seq.length() != now.getPhysicalRows()) {
      return null;
    }
    RoaringBitmap before = deletions.read(uri, then);
    RoaringBitmap after = before == null ? null : deletions.read(uri, now);
    if (after == null) {
      return null;
    }
    boolean restored = !RoaringBitmap.andNot(before, after).isEmpty();
    return new Deletions(at(seq, RoaringBitmap.andNot(after, before)), restored);
  }
}
