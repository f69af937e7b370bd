package io.lancerest.spark.mv.rowindex;

import java.util.Arrays;
import java.util.List;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The view rows of some source rows, as parallel arrays of source row id and view row address
 * ({@code fragment << 32 | offset}), with what it took to find them.
 */
public final class ViewRows {
  /** The source row ids found. */
  public final Roaring64NavigableMap ids = Roaring64NavigableMap.bitmapOf();
  private long[] sids = new long[16];
  private long[] addrs = new long[16];
  private int size;
  /** View fragments, and those whose range could hold a wanted id (looked at). */
  int fragments;
  List<Integer> lookedAt = List.of();
  /** Of {@link #lookedAt}: those read through their index, and those scanned. */
  List<Integer> indexed = List.of();
  List<Integer> scanned = List.of();

  void add(long sid, long addr) {
    if (size == sids.length) {
      sids = Arrays.copyOf(sids, size * 2);
      addrs = Arrays.copyOf(addrs, size * 2);
    }
    sids[size] = sid;
    addrs[size] = addr;
    size++;
    ids.addLong(sid);
  }

  /** Rows found. */
  public int size() {
    return size;
  }

  public long sourceRowId(int i) {
    return sids[i];
  }

  public long address(int i) {
    return addrs[i];
  }

  /** Fragments of the view. */
  public int fragments() {
    return fragments;
  }

  /** Fragments whose recorded range holds a wanted id (all of them without ranges). */
  public List<Integer> lookedAt() {
    return lookedAt;
  }

  /** Fragments whose rows were found through their source id index, without reading them. */
  public List<Integer> indexed() {
    return indexed;
  }

  /** Fragments whose {@code __source_row_id} column was read. */
  public List<Integer> scanned() {
    return scanned;
  }

  /** For the refresh's log line: how the rows were found. */
  public String describe() {
    if (lookedAt.isEmpty()) {
      return "no view fragment read";
    }
    return lookedAt.size() + " of " + fragments + " view fragments looked at: " + indexed.size()
        + " by their source id index, " + scanned.size() + " read";
  }
}
