package io.lancerest.spark.mv.fragments;

import io.lancerest.spark.mv.definition.SourceIdentity;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Field;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change set of a source table between the version a view reflects (its watermark) and the
 * version a refresh brings it to, fragment by fragment, as every kind that refreshes by changed
 * rows reads it.
 *
 * <p>With {@code O} the row ids the watermark version had in fragments that changed since
 * ({@link #departed}: rewritten or removed fragments, and the rows deleted from fragments that
 * only gained deletions) and {@code N} the rows of the new and rewritten fragments ({@link
 * #rescan}): every row of a fragment outside both is the same row, with the same values, as at
 * the watermark. What a view derived from the rows of {@code O} may have to go, and the rows of
 * {@code N} may have to be derived; nothing else does.
 *
 * <p>How it is computed, without reading any data file: the commits since the watermark say
 * which fragments they touched ({@link SourceHistory}), and only those are compared, by id, with
 * the watermark version ({@link FragmentDiff#touched}); the target version's fragments are
 * listed once, by the caller. The rows that left a fragment are its deletion file's new offsets
 * ({@link DeletionVectors}). Fragments a compaction only moved are taken out of both sides
 * ({@link SourceHistory#moved}): their rows came back with the same ids and values.
 */
public final class SourceChanges {
  private static final Logger LOG = LoggerFactory.getLogger(SourceChanges.class);

  /** The fragment comparison; {@code null} when the versions cannot be compared ({@link #why}). */
  public final FragmentDiff diff;
  /** Why the two versions cannot be compared, or {@code null}. */
  public final String why;
  /** {@code O}: row ids that left changed fragments (less those a compaction only moved). */
  public final Roaring64NavigableMap departed;
  /** Fragment ids of the target version to read ({@code N}). */
  public final List<Integer> rescan;
  /** Physical rows of {@link #rescan}. */
  public final long rescanRows;
  /** The source's columns, without their metadata. */
  public final List<Field> sourceFields;
  /** The commits since the watermark; {@code null} when not read. */
  public final SourceHistory history;
  /** Source rows a compaction only moved, in fragments taken out of {@link #rescan}. */
  public final long moved;
  /** Live-id sets served from {@link LiveRowIds}, and fragments whose ids were scanned. */
  public final int cachedSets;
  public final int fragmentsScanned;
  /** Whether the older side was read by the ids the commits touched, not by listing it. */
  public final boolean byCommits;
  public final long millis;

  private SourceChanges(FragmentDiff diff, String why, Roaring64NavigableMap departed,
      List<Integer> rescan, long rescanRows, List<Field> sourceFields, SourceHistory history,
      long moved, int cachedSets, int fragmentsScanned, boolean byCommits, long millis) {
    this.diff = diff;
    this.why = why;
    this.departed = departed;
    this.rescan = rescan == null ? null : Collections.unmodifiableList(rescan);
    this.rescanRows = rescanRows;
    this.sourceFields = sourceFields;
    this.history = history;
    this.moved = moved;
    this.cachedSets = cachedSets;
    this.fragmentsScanned = fragmentsScanned;
    this.byCommits = byCommits;
    this.millis = millis;
  }

  /** Two versions that cannot be compared, for {@code why}; {@code t0}: when it began. */
  public static SourceChanges notComparable(String why, long t0) {
    return new SourceChanges(null, why, null, null, 0, null, null, 0, 0, 0, false,
        System.currentTimeMillis() - t0);
  }

  /**
   * The change from {@code then} (the watermark version) to {@code now}, whose fragments the
   * caller listed ({@code nowFragments}).
   *
   * @param label how logs name the refresh ("View v (job j)")
   */
  public static SourceChanges between(org.lance.Dataset then, org.lance.Dataset now,
      List<FragmentMetadata> nowFragments, LiveRowIds cache, DeletionVectors.Reader deletions,
      String label) throws Exception {
    long t0 = System.currentTimeMillis();
    // Columns without their metadata: a source that is itself a view keeps its watermark in
    // field metadata, which changes at every one of its refreshes.
    List<Field> fields = SourceIdentity.columnsOnly(now.getSchema().getFields());
    if (!SourceIdentity.columnsOnly(then.getSchema().getFields()).equals(fields)) {
      LOG.info("{}: the source schema changed since version {}; scanning every row", label,
          then.version());
      return notComparable("the source schema changed since version " + then.version(), t0);
    }
    SourceHistory history = SourceHistory.after(now, then.version(), nowFragments, deletions);
    FragmentDiff diff = history.touched() == null ? null
        : FragmentDiff.touched(then, nowFragments, history.touched());
    boolean byCommits = diff != null;
    if (diff == null) {
      if (history.touched() != null) {
        LOG.info("{}: the commits since version {} do not add up to the fragments of version "
            + "{}; comparing every fragment", label, then.version(), now.version());
      }
      diff = FragmentDiff.between(FragmentDiff.metadata(then.getFragments()), nowFragments);
    }
    FragmentDiff.Departed d = diff.departed(then, now, cache, deletions);
    if (byCommits && !rowsAddUp(then, now, nowFragments, diff, d)) {
      LOG.warn("{}: the fragments the commits since version {} touched do not account for "
          + "every row of version {}; comparing every fragment", label, then.version(),
          now.version());
      byCommits = false;
      diff = FragmentDiff.between(FragmentDiff.metadata(then.getFragments()), nowFragments);
      d = diff.departed(then, now, cache, deletions);
    }
    Roaring64NavigableMap departed = d.ids();
    List<Integer> rescan = new ArrayList<>(diff.rescan);
    rescan.addAll(d.rescanAgain());
    // Fragments read again whole (rows came back) count towards the rows to read too.
    long rescanRows = diff.rescanRows + d.rescanAgainRows();
    long moved = 0;
    if (!departed.isEmpty() && !rescan.isEmpty()) {
      if (history.changedInPlace() == null) {
        LOG.info("{}: the source's history since version {} cannot tell which rows a "
            + "compaction moved unchanged ({}); the view rows of changed fragments are written "
            + "again", label, then.version(), history.unknown());
      } else {
        SourceHistory.Moved m = history.moved(now, nowFragments, rescan, departed);
        if (!m.fragments().isEmpty()) {
          rescan.removeAll(m.fragments());
          rescanRows -= m.physicalRows();
          departed.andNot(m.ids());
          moved = m.ids().getLongCardinality();
          LOG.info("{}: {}; {} source rows in fragments {} were only moved by a compaction: "
              + "kept, not read", label, history, moved, m.fragments());
        }
      }
    }
    return new SourceChanges(diff, null, departed, rescan, rescanRows, fields, history, moved,
        d.cachedSets(), d.fragmentsScanned(), byCommits, System.currentTimeMillis() - t0);
  }

  /**
   * Whether the live rows of the two versions differ by exactly what the diff says: the rows
   * that left changed fragments went, the live rows of the fragments to read arrived. A commit
   * whose transaction left out a fragment it changed would show here, as rows that came or
   * went unaccounted for.
   */
  private static boolean rowsAddUp(org.lance.Dataset then, org.lance.Dataset now,
      List<FragmentMetadata> nowFragments, FragmentDiff diff, FragmentDiff.Departed d) {
    java.util.Map<Integer, FragmentMetadata> byId = new java.util.HashMap<>();
    nowFragments.forEach(f -> byId.put(f.getId(), f));
    long arrived = 0;
    for (int id : diff.rescan) {
      arrived += byId.get(id).getNumRows();
    }
    for (int id : d.rescanAgain()) {
      arrived += byId.get(id).getNumRows();
    }
    return then.countRows() - d.ids().getLongCardinality() + arrived == now.countRows();
  }

  /**
   * The rows of {@code inView} that a refresh may keep when their source row turns up unchanged
   * in a rewritten fragment: none when the history cannot tell which rows changed in place, and
   * never those it says did (their update version may be lost).
   */
  public Roaring64NavigableMap keepable(Roaring64NavigableMap inView) {
    Roaring64NavigableMap changed = history == null ? null : history.changedInPlace();
    if (changed == null) {
      return Roaring64NavigableMap.bitmapOf();
    }
    Roaring64NavigableMap out = new Roaring64NavigableMap();
    out.or(inView);
    out.andNot(changed);
    return out;
  }
}
