package io.lancerest.spark.mv.chunker;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Row;

/**
 * Parents of a work item called together: one (row form, or an isolated batch parent) or a
 * batch.
 */
record WorkUnit(List<Row> parents, boolean batch) {
  long firstSid() {
    return parents.get(0).getLong(0);
  }

  /** Names the unit across restarts of its work item (its failures and splits are kept). */
  String key() {
    return firstSid() + "/" + parents.size();
  }

  boolean contains(long sid) {
    for (Row p : parents) {
      if (p.getLong(0) == sid) {
        return true;
      }
    }
    return false;
  }

  /**
   * The units of a work item's {@code live} parents: one a parent for a row chunker; for a
   * batch chunker up to {@code concurrency} batches, those in {@code split} (a batch that failed
   * and is skipped parent by parent) as one unit a parent.
   */
  static List<WorkUnit> of(List<Row> live, boolean batch, int concurrency, Set<String> split) {
    List<WorkUnit> out = new ArrayList<>();
    if (!batch) {
      for (Row p : live) {
        out.add(new WorkUnit(List.of(p), false));
      }
      return out;
    }
    int parts = Math.max(1, Math.min(concurrency, live.size()));
    int per = (live.size() + parts - 1) / parts;
    for (int from = 0; from < live.size(); from += per) {
      WorkUnit u = new WorkUnit(live.subList(from, Math.min(live.size(), from + per)), true);
      if (split.contains(u.key())) {
        for (Row p : u.parents()) {
          out.add(new WorkUnit(List.of(p), true));
        }
      } else {
        out.add(u);
      }
    }
    return out;
  }
}
