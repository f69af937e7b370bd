package io.lancerest.spark.mv.chunker;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What survives the restarts of one work item: its failures counted, batches split and parents
 * skipped.
 */
final class ItemState {
  /** Attempts that failed, by {@link WorkUnit#key()}. */
  final Map<String, Integer> failures = new HashMap<>();
  /** Batches run again parent by parent, by {@link WorkUnit#key()}. */
  final Set<String> split = new HashSet<>();
  final LinkedHashMap<Long, ChunkerRefreshResult.SkippedParent> skipped = new LinkedHashMap<>();
  /** The item's children outgrew the buffer: it is written as fragments of its own. */
  boolean ownFragments;

  void skip(long sid, int attempts, Throwable t) {
    skipped.putIfAbsent(sid, new ChunkerRefreshResult.SkippedParent(sid, attempts,
        t.getClass().getName(), String.valueOf(t.getMessage())));
  }
}
