package io.lancerest.spark.mv.rowindex;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.lance.FragmentMetadata;

/**
 * The source id indexes read by recent refreshes of one catalog ({@code RefreshCaches}), so that
 * a session refreshing the same view again reads each index once. An index describes a data
 * file that lance-core never rewrites, so a cached one is never stale; the key is the view's
 * location and the fragment's first data file. At most {@value #MAX_BYTES} bytes of indexes
 * (their size in memory) are kept, least recently used first out.
 */
public final class SourceIdIndexCache {
  static final long MAX_BYTES = 256L << 20;

  private final LinkedHashMap<String, Held> held = new LinkedHashMap<>(64, 0.75f, true);
  private long bytes;

  private record Held(SourceIdIndex index, long bytes) {}

  /** The index of {@code f}, from the cache or {@code load} (which may answer {@code null}). */
  public SourceIdIndex get(String viewUri, FragmentMetadata f, Supplier<SourceIdIndex> load) {
    String key = viewUri + '\n' + f.getFiles().get(0).getPath();
    synchronized (held) {
      Held h = held.get(key);
      if (h != null) {
        return h.index();
      }
    }
    SourceIdIndex index = load.get();
    if (index != null) {
      put(key, index);
    }
    return index;
  }

  private void put(String key, SourceIdIndex index) {
    long size = index.sizeInBytes();
    if (size > MAX_BYTES) {
      return;
    }
    synchronized (held) {
      Held old = held.put(key, new Held(index, size));
      bytes += size - (old == null ? 0 : old.bytes());
      for (Iterator<Map.Entry<String, Held>> it = held.entrySet().iterator();
          bytes > MAX_BYTES && it.hasNext(); ) {
        bytes -= it.next().getValue().bytes();
        it.remove();
      }
    }
  }
}
