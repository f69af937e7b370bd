package io.lancerest.spark.mv.fragments;

import java.util.LinkedHashMap;
import java.util.Map;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The live row ids of fragments recently scanned for a fragment diff, kept for the next refresh
 * of the same catalog ({@code RefreshCaches}): a fragment that keeps losing rows to UPDATEs (a
 * large one of an often-updated table) is compared at the watermark and at the target version,
 * and the next refresh's watermark is this one's target, so its older side is the set this
 * refresh scanned.
 *
 * <p>Keyed by the dataset location and the fragment's whole metadata (id, data files, row count,
 * row-id sequence, deletion file with its id and version). Lance data and deletion files are
 * immutable and named uniquely, so equal keys mean the same live rows; any new deletion file
 * makes another key. lance-core's {@code FragmentMetadata} has no {@code hashCode}, so the key
 * is its {@code toString}, which prints every one of those fields. At most {@value #ENTRIES}
 * sets of up to {@value #MAX_BYTES} bytes each (a million ids with scattered holes is about
 * 130 KB; runs of ids are far smaller), least recently used first out.
 */
public final class LiveRowIds {
  static final int ENTRIES = 16;
  static final long MAX_BYTES = 4L << 20;

  private final Map<String, Roaring64NavigableMap> sets =
      new LinkedHashMap<>(32, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Roaring64NavigableMap> e) {
          return size() > ENTRIES;
        }
      };


  private static String key(String uri, FragmentMetadata f) {
    return uri + '\n' + f;
  }

  /** A copy of the cached set, or {@code null}. */
  Roaring64NavigableMap cached(String uri, FragmentMetadata f) {
    if (f == null) {
      return null;
    }
    Roaring64NavigableMap s;
    synchronized (sets) {
      s = sets.get(key(uri, f));
    }
    if (s == null) {
      return null;
    }
    return copy(s);
  }

  /** Remembers {@code ids}, just scanned for {@code f}; returns them. */
  Roaring64NavigableMap scanned(String uri, FragmentMetadata f,
      Roaring64NavigableMap ids) {
    ids.runOptimize();
    if (ids.serializedSizeInBytes() <= MAX_BYTES) {
      Roaring64NavigableMap kept = copy(ids);
      synchronized (sets) {
        sets.put(key(uri, f), kept);
      }
    }
    return ids;
  }

  void clear() {
    synchronized (sets) {
      sets.clear();
    }
  }

  private static Roaring64NavigableMap copy(Roaring64NavigableMap s) {
    Roaring64NavigableMap c = new Roaring64NavigableMap();
    c.or(s);
    return c;
  }
}
