package io.lancerest.spark.mv.rowindex;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Which source rows each fragment of a query view can hold: for every view fragment a refresh
 * wrote, the smallest and largest {@code __source_row_id} in it, and whether its {@link
 * SourceIdIndex} was written, stored as view schema metadata ({@value #KEY}) by the view's
 * commit. An incremental refresh looking up the view rows of some source rows then looks only at
 * the fragments whose range holds one of them, and finds the rows of an indexed one without
 * reading it.
 *
 * <p>Format: entries {@code <fragment id>:<min>-<max>:<file tag>[:i]} joined by {@code ,}, in
 * fragment id order, numbers in decimal; the file tag is the base-36 hash of the path of the
 * fragment's first data file, and {@code :i} marks an indexed fragment. Example: {@code
 * 0:0-1048575:1ksv2z:i,7:5000000-5054999:9qd3w}. About 37 bytes a fragment for row ids below
 * 10^10; at most {@value #MAX_ENTRIES} entries (about 38 KB) are kept, those of the fragments
 * with the most rows: a fragment without an entry is simply read.
 *
 * <p>Safety: a range is only used for a fragment that has an entry AND whose first data file
 * still has the recorded tag. Fragments written by anything else (a view from before ranges
 * were recorded, a Lance compaction of the view, a writer other than the refresh, an id that
 * came back for another fragment) have no entry or another file, and are always read.
 * Deletions keep a fragment's files, and a range of a fragment that lost rows still holds the
 * rest.
 */
public final class FragmentSourceRanges {
  /** View schema metadata key. */
  public static final String KEY = "lancerest::view::fragment_source_ranges";
  /** Most entries kept; the fragments with fewer rows lose theirs first. */
  public static final int MAX_ENTRIES = 1024;

  private FragmentSourceRanges() {}

  /** One fragment's entry. */
  public record Entry(long min, long max, String fileTag, boolean indexed) {
    public Entry(long min, long max, String fileTag) {
      this(min, max, fileTag, false);
    }
  }

  /**
   * What a writer knows of a new fragment: the range of its source row ids ({@code min <= max})
   * and whether its index was written. Tasks ship it to the driver.
   */
  public record Range(long min, long max, boolean indexed) implements java.io.Serializable {
    public Range {
      if (min > max) {
        throw new IllegalArgumentException("source range must be min <= max, got " + min + "-"
            + max);
      }
    }
  }

  /** A fragment's file tag: identifies its data, which no other fragment shares. */
  public static String fileTag(FragmentMetadata f) {
    if (f.getFiles() == null || f.getFiles().isEmpty()) {
      return "-";
    }
    return Integer.toString(f.getFiles().get(0).getPath().hashCode() & 0x7fffffff, 36);
  }

  /**
   * The entries of a metadata value by fragment id; an unreadable entry (or value) is left out,
   * and its fragment is then read.
   */
  public static Map<Integer, Entry> parse(String value) {
    Map<Integer, Entry> out = new TreeMap<>();
    if (value == null || value.isBlank()) {
      return out;
    }
    for (String e : value.split(",")) {
      String[] p = e.strip().split(":");
      if (p.length != 3 && !(p.length == 4 && p[3].equals("i"))) {
        continue;
      }
      int dash = p[1].indexOf('-', 1); // a minimum may be negative
      if (dash < 0) {
        continue;
      }
      try {
        int id = Integer.parseInt(p[0]);
        long min = Long.parseLong(p[1].substring(0, dash));
        long max = Long.parseLong(p[1].substring(dash + 1));
        if (min <= max && !p[2].isEmpty()) {
          out.put(id, new Entry(min, max, p[2], p.length == 4));
        }
      } catch (NumberFormatException ignored) {
        // left out: the fragment is read
      }
    }
    return out;
  }

  /**
   * The metadata value for {@code entries}, or {@code null} when there are none. Over {@value
   * #MAX_ENTRIES}, the entries of the fragments with the fewest rows ({@code rows}) are dropped.
   */
  public static String format(Map<Integer, Entry> entries, Map<Integer, Long> rows) {
    if (entries.isEmpty()) {
      return null;
    }
    List<Integer> ids = new ArrayList<>(entries.keySet());
    if (ids.size() > MAX_ENTRIES) {
      ids.sort(Comparator.comparingLong((Integer id) -> rows.getOrDefault(id, 0L)).reversed()
          .thenComparing(Comparator.naturalOrder()));
      ids = new ArrayList<>(ids.subList(0, MAX_ENTRIES));
    }
    ids.sort(Comparator.naturalOrder());
    StringBuilder b = new StringBuilder();
    for (int id : ids) {
      Entry e = entries.get(id);
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(id).append(':').append(e.min()).append('-').append(e.max()).append(':')
          .append(e.fileTag());
      if (e.indexed()) {
        b.append(":i");
      }
    }
    return b.toString();
  }

  /** The entry of {@code f} in {@code entries} when it still describes {@code f}'s data. */
  public static Entry valid(Map<Integer, Entry> entries, FragmentMetadata f) {
    Entry e = entries.get(f.getId());
    return e != null && e.fileTag().equals(fileTag(f)) ? e : null;
  }

  /**
   * The ids of the {@code fragments} that may hold a row whose source row id is in {@code ids}:
   * every fragment without a valid entry, and those whose range holds one of {@code ids}.
   */
  public static List<Integer> fragmentsHolding(List<FragmentMetadata> fragments,
      String value, Roaring64NavigableMap ids) {
    Map<Integer, Entry> entries = parse(value);
    List<Integer> out = new ArrayList<>();
    for (FragmentMetadata f : fragments) {
      Entry e = entries.get(f.getId());
      if (e == null || !e.fileTag().equals(fileTag(f)) || holdsAny(ids, e.min(), e.max())) {
        out.add(f.getId());
      }
    }
    return out;
  }

  /** Whether {@code ids} has a value in {@code [min, max]}. */
  public static boolean holdsAny(Roaring64NavigableMap ids, long min, long max) {
    if (min < 0 || max < 0) {
      return true; // ids at or above 2^63 order differently signed and unsigned: just read
    }
    // rankLong(x): how many ids are <= x
    long below = min == 0 ? 0 : ids.rankLong(min - 1);
    return ids.rankLong(max) > below;
  }
}
