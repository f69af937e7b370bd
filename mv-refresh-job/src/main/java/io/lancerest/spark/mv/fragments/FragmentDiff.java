package io.lancerest.spark.mv.fragments;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * How the fragments of a Lance dataset differ between two versions.
 *
 * <p>Lance data and deletion files are immutable and a fragment id is never reused for other
 * data, so a fragment whose metadata is equal at both versions holds the same rows, with the
 * same values and row ids: it needs no reading at all. Of the others:
 * <ul>
 *   <li>{@link #deletionsChanged}: same data files, rows and row-id sequence, another deletion
 *       file. Only the set of live rows changed (rows deleted, or un-deleted by a restore); the
 *       values of the rows live at both versions did not;</li>
 *   <li>{@link #rescan}: fragments of the newer version that are new or whose data changed
 *       (appends, in-place updates, compaction output);</li>
 *   <li>{@link #replaced}: fragments of the older version whose data changed or that are gone
 *       (compaction input, fragments emptied by deletes).</li>
 * </ul>
 */
public final class FragmentDiff {
  /** Fragment ids of the newer version to read again. */
  public final List<Integer> rescan;
  /** Fragment ids of the older version whose rows were replaced or removed. */
  public final List<Integer> replaced;
  /** Fragment ids at both versions whose only difference is the deletion file. */
  public final List<Integer> deletionsChanged;
  /** Physical rows of the {@link #rescan} fragments. */
  public final long rescanRows;
  /** Fragments of the newer version. */
  public final int fragmentsNow;

  private FragmentDiff(List<Integer> rescan, List<Integer> replaced,
      List<Integer> deletionsChanged, long rescanRows, int fragmentsNow) {
    this.rescan = Collections.unmodifiableList(rescan);
    this.replaced = Collections.unmodifiableList(replaced);
    this.deletionsChanged = Collections.unmodifiableList(deletionsChanged);
    this.rescanRows = rescanRows;
    this.fragmentsNow = fragmentsNow;
  }

  /** The difference from {@code then} (older version) to {@code now}. */
  public static FragmentDiff between(List<FragmentMetadata> then, List<FragmentMetadata> now) {
    Map<Integer, FragmentMetadata> before = new HashMap<>();
    for (FragmentMetadata f : then) {
      before.put(f.getId(), f);
    }
    List<Integer> rescan = new ArrayList<>();
    List<Integer> replaced = new ArrayList<>();
    List<Integer> deletions = new ArrayList<>();
    long rows = 0;
    for (FragmentMetadata f : now) {
      FragmentMetadata old = before.remove(f.getId());
      if (f.equals(old)) {
        continue;
      }
      if (old != null && sameData(old, f)) {
        deletions.add(f.getId());
      } else {
        rescan.add(f.getId());
        rows += f.getPhysicalRows();
        if (old != null) {
          replaced.add(old.getId());
        }
      }
    }
    replaced.addAll(before.keySet());
    Collections.sort(replaced);
    return new FragmentDiff(rescan, replaced, deletions, rows, now.size());
  }

  /** The metadata of {@code fragments}. */
  public static List<FragmentMetadata> metadata(List<Fragment> fragments) {
    List<FragmentMetadata> out = new ArrayList<>(fragments.size());
    for (Fragment f : fragments) {
      out.add(f.metadata());
    }
    return out;
  }

  private static boolean sameData(FragmentMetadata a, FragmentMetadata b) {
    return a.getPhysicalRows() == b.getPhysicalRows() && a.getFiles().equals(b.getFiles())
        && Objects.equals(a.getRowIdMeta(), b.getRowIdMeta());
  }

  /** Whether nothing differs. */
  public boolean isEmpty() {
    return rescan.isEmpty() && replaced.isEmpty() && deletionsChanged.isEmpty();
  }

  @Override
  public String toString() {
    return rescan.size() + " new or rewritten, " + deletionsChanged.size() + " with new "
        + "deletions, " + replaced.size() + " replaced or removed, of " + fragmentsNow
        + " fragments";
  }

  /**
   * The row ids of the live rows of {@code fragments} in {@code dataset} (stable row ids). Only
   * Lance's row-id metadata is read, never a data file.
   */
  public static Roaring64NavigableMap rowIds(org.lance.Dataset dataset, List<Integer> fragments)
      throws Exception {
    Roaring64NavigableMap ids = new Roaring64NavigableMap();
    if (fragments.isEmpty()) {
      return ids;
    }
    try (LanceScanner s = dataset.newScan(new ScanOptions.Builder().fragmentIds(fragments)
            .columns(List.of()).withRowId(true).build());
        ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        VectorSchemaRoot root = r.getVectorSchemaRoot();
        addLongs(root.getVector("_rowid"), root.getRowCount(), ids);
      }
    }
    return ids;
  }

  /**
   * Adds the values of a 64-bit integer vector (no nulls expected) to {@code ids}. A stable
   * row-id scan yields long runs of consecutive ids (a fragment's ids are mostly one range), and
   * adding a run as one range is far cheaper than adding its ids one by one: for the million
   * rows of a fragment that gained a deletion, that loop was most of the fragment diff.
   */
  public static void addLongs(FieldVector v, int rows, Roaring64NavigableMap ids) {
    if (rows == 0) {
      return;
    }
    long start = value(v, 0);
    long prev = start;
    for (int i = 1; i < rows; i++) {
      long x = value(v, i);
      if (x != prev + 1 || prev == -1L) {
        addRun(ids, start, prev);
        start = x;
      }
      prev = x;
    }
    addRun(ids, start, prev);
  }

  private static long value(FieldVector v, int i) {
    if (v instanceof UInt8Vector u) {
      return u.get(i);
    }
    if (v instanceof BigIntVector b) {
      return b.get(i);
    }
    return ((Number) v.getObject(i)).longValue();
  }

  /** Adds {@code first..last} (inclusive, {@code first <= last} unsigned) to {@code ids}. */
  private static void addRun(Roaring64NavigableMap ids, long first, long last) {
    if (first == last) {
      ids.addLong(first);
    } else if (last == -1L) {
      // the range end is exclusive and last + 1 would wrap to 0
      ids.addRange(first, last);
      ids.addLong(last);
    } else {
      ids.addRange(first, last + 1);
    }
  }
}
