package io.lancerest.spark.mv.rowindex;

import java.util.ArrayList;
import java.util.List;
import org.roaringbitmap.longlong.LongIterator;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/** Sets of row ids as runs of consecutive ids, and as the Lance filters that select them. */
public final class IdRuns {
  /** Most ids put into one {@code IN} filter of a Lance scan. */
  private static final int MAX_ID_LITERALS = 1 << 16;

  private IdRuns() {}

  /** Inclusive runs {@code [from, to]}; {@code null} when there are more than {@code max}. */
  public static List<long[]> of(Roaring64NavigableMap ids, int max) {
    List<long[]> out = new ArrayList<>();
    LongIterator it = ids.getLongIterator();
    long[] run = null;
    while (it.hasNext()) {
      long v = it.next();
      if (run != null && v == run[1] + 1) {
        run[1] = v;
        continue;
      }
      if (out.size() == max) {
        return null;
      }
      run = new long[] {v, v};
      out.add(run);
    }
    return out;
  }

  /**
   * A Lance SQL filter keeping the rows whose {@code column} is in {@code ids} (ranges when the
   * set has at most {@code maxRuns} runs, else an IN list), or {@code null} when the set is too
   * large to be worth it: the caller then checks every row.
   */
  public static String filter(String column, Roaring64NavigableMap ids, int maxRuns) {
    List<long[]> runs = of(ids, maxRuns);
    StringBuilder b = new StringBuilder();
    if (runs != null) {
      for (long[] r : runs) {
        if (b.length() > 0) {
          b.append(" OR ");
        }
        b.append(r[0] == r[1] ? "(" + column + " = " + r[0] + ")"
            : "(" + column + " >= " + r[0] + " AND " + column + " <= " + r[1] + ")");
      }
      return b.toString();
    }
    if (ids.getLongCardinality() > MAX_ID_LITERALS) {
      return null;
    }
    b.append(column).append(" IN (");
    boolean first = true;
    for (LongIterator it = ids.getLongIterator(); it.hasNext(); ) {
      if (!first) {
        b.append(", ");
      }
      b.append(it.next());
      first = false;
    }
    return b.append(')').toString();
  }
}
