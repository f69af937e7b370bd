package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.fragments.FragmentRowIds;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.fragments.LiveRowIds;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.refresh.AttemptDatasets;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a refresh must do to the view, learned from the source: the parents to expand and the
 * processed parents whose children must go.
 *
 * <p><b>Scope.</b> When the view's previous refresh left every filtered row of its source
 * version processed ({@link ChunkerRefresh#UNPROCESSED_KEY} = 0), or processed but for the
 * parents it skipped ({@link ParentState#skipped}), only the change set since the watermark is
 * read ({@link SourceChanges}): the new and rewritten fragments are scanned for present, new and
 * updated rows, and a processed parent among the rows that left changed fragments (the deletion
 * files' new offsets) that is not present again is gone. Every other row is the same row, with
 * the same values, as at the watermark, and was expanded then; a skipped parent among them is
 * still there, matching the filter, and is expanded again from its fragment, which the
 * fragments' row-id sequences name ({@link FragmentRowIds#holding}). Any doubt (watermark
 * version cleaned up, schema changed, unprocessed parents other than the skipped ones, {@code
 * output_limit}, a skipped parent no sequence places) scans every fragment instead.
 *
 * <p><b>Compactions.</b> A compaction moves rows to new fragments with their row ids; the change
 * set takes the fragments that hold only such rows out of both sides. lance-spark's {@code
 * OPTIMIZE} loses the rows' update version (every moved row reports version 1), so the source's
 * commits since the watermark ({@link SourceHistory}) say which rows were changed in place:
 * those are expanded again, and when the history cannot tell, every processed parent scanned
 * is.
 *
 * <p><b>Readers.</b> Without a filter the scan reads only Lance's metadata columns ({@code
 * _rowid}, {@code _row_last_updated_at_version}; neither touches a data file) on the driver
 * through lance-core. A filter is evaluated by Spark through lance-spark: over the changed
 * fragments only ({@link FragmentScopedRead}), or over every fragment.
 */
final class SourceState {
  private static final Logger LOG = LoggerFactory.getLogger(SourceState.class);

  /** Most row ids put into one {@code _rowid IN} filter. */
  static final int MAX_ID_LITERALS = 1 << 16;


  /** Filtered row ids present in the scanned fragments. */
  final Roaring64NavigableMap present;
  /** Processed parents that are gone (deleted, or no longer matching the filter). */
  final Roaring64NavigableMap gone;
  /** Processed parents updated in place since the watermark. */
  final Roaring64NavigableMap changed;
  /** New and changed parents. */
  final Roaring64NavigableMap toExpand;
  /** Whether every fragment was scanned ({@link #present} is then the whole filtered source). */
  final boolean wholeSource;
  /** For the log: which fragments were scanned. */
  final String scope;
  /** The fragments scanned at the target version, {@code null} for every one. */
  final List<Integer> fragments;
  /** Fragments of the target version. */
  final int fragmentsNow;
  /** Physical rows of the fragments scanned. */
  final long rowsScanned;

  private SourceState(Roaring64NavigableMap present, Roaring64NavigableMap gone,
      Roaring64NavigableMap changed, Roaring64NavigableMap toExpand, boolean wholeSource,
      String scope, List<Integer> fragments, int fragmentsNow, long rowsScanned) {
    this.present = present;
    this.gone = gone;
    this.changed = changed;
    this.toExpand = toExpand;
    this.wholeSource = wholeSource;
    this.scope = scope;
    this.fragments = fragments == null ? null : List.copyOf(fragments);
    this.fragmentsNow = fragmentsNow;
    this.rowsScanned = rowsScanned;
  }

  /** What one scan found: present ids, changed ids, ids to expand. */
  private static final class Found {
    final Roaring64NavigableMap present = new Roaring64NavigableMap();
    final Roaring64NavigableMap changed = new Roaring64NavigableMap();
    final Roaring64NavigableMap expand = new Roaring64NavigableMap();

    void add(long id, long lastUpdated, long watermark,
        Roaring64NavigableMap processed) {
      present.addLong(id);
      boolean done = processed.contains(id);
      boolean updated = watermark > 0 && lastUpdated > watermark;
      if (done && !updated) {
        return;
      }
      if (done) {
        changed.addLong(id);
      }
      expand.addLong(id);
    }

    void or(Found o) {
      present.or(o.present);
      changed.or(o.changed);
      expand.or(o.expand);
    }

    byte[][] toBytes() {
      return new byte[][] {ParentIds.toBytes(present), ParentIds.toBytes(changed),
          ParentIds.toBytes(expand)};
    }

    static Found fromBytes(byte[][] b) {
      Found f = new Found();
      f.present.or(ParentIds.fromBytes(b[0]));
      f.changed.or(ParentIds.fromBytes(b[1]));
      f.expand.or(ParentIds.fromBytes(b[2]));
      return f;
    }
  }

  /** Where and how a refresh reads its source. */
  record Source(RefreshContext ctx, ViewTables tables, AttemptDatasets datasets, String filter,
      Dataset<Row> frame) {
    SparkSession spark() {
      return ctx.spark();
    }

    String viewName() {
      return ctx.viewName();
    }
  }

  /**
   * Scans the source at {@code version} against the processed set.
   *
   * @param retry parents the last refresh skipped, tried again ({@code null}: not known; they
   *     are then found by a scan of every fragment)
   * @param mayScope whether fragments unchanged since the watermark may be skipped (the caller
   *     checked the view's state allows it)
   */
  static SourceState scan(Source src, long watermark, long version,
      Roaring64NavigableMap processed, Roaring64NavigableMap retry, boolean mayScope) {
    org.lance.Dataset target = src.datasets().source(version);
    List<FragmentMetadata> now = metadata(target.getFragments());
    SourceChanges changes = mayScope && watermark > 0
        ? changes(src, watermark, target, now) : null;
    Retry retried = changes == null ? null : Retry.locate(src, changes, now, retry);
    if (retried == null) {
      changes = null;
    }
    SourceHistory history = changes == null ? null : changes.history;
    if (changes == null && watermark > 0 && !processed.isEmpty()) {
      history = history(src, target, watermark);
    } else if (history != null && history.changedInPlace() == null) {
      logUnknown(src, history, watermark);
    }
    List<Integer> scanned = changes == null ? null : changes.rescan;
    Found found;
    if (src.filter() == null) {
      found = scanDriver(target, scanned, watermark, processed, null);
    } else if (scanned != null) {
      found = scanFiltered(src, target, scanned, watermark, processed);
    } else {
      found = scanSpark(src, watermark, processed);
    }
    if (history != null) {
      changedInPlace(src, found, processed, history, watermark);
    }
    List<Integer> scope = scanned;
    if (retried != null) {
      // present and unchanged since they were skipped: expanded again, from their fragments;
      // never one processed already (its children are in the view)
      Roaring64NavigableMap again = ParentIds.minus(retried.ids, found.present);
      again.andNot(processed);
      found.present.or(again);
      found.expand.or(again);
      scope = new ArrayList<>(scanned);
      scope.addAll(retried.fragments);
    }
    if (scope != null) {
      src.ctx().observe(RefreshListener.Probe.SOURCE_FRAGMENTS_READ, List.copyOf(scope));
    }
    Roaring64NavigableMap gone;
    if (changes == null) {
      gone = ParentIds.minus(processed, found.present);
    } else {
      // a processed parent that left a changed fragment and is not among the present rows
      // of the new and rewritten ones is gone; every other row is as it was
      gone = ParentIds.and(processed, changes.departed);
      gone.andNot(found.present);
    }
    String described = changes == null ? "all " + now.size() + " fragments"
        : scope.size() + " of " + now.size() + " fragments read (" + changes.diff + "; "
            + changes.departed.getLongCardinality() + " rows left changed fragments"
            + (changes.moved == 0 ? "" : ", " + changes.moved + " more were only moved by a "
            + "compaction, not read")
            + (retried.ids.isEmpty() ? "" : "; " + retried.ids.getLongCardinality()
            + " skipped parents retried from " + retried.fragments.size() + " more") + ")";
    long rows = changes != null ? changes.rescanRows + retried.rows
        : now.stream().mapToLong(FragmentMetadata::getPhysicalRows).sum();
    return new SourceState(found.present, gone, found.changed, found.expand, changes == null,
        described, scope, now.size(), rows);
  }

  /**
   * The skipped parents a scoped refresh retries from fragments it does not read otherwise:
   * those that did not leave a changed fragment since the watermark are there, unchanged, and
   * still match the filter they matched then.
   *
   * @param ids the parents to retry
   * @param fragments the unchanged fragments that hold them
   * @param rows the physical rows of those fragments
   */
  private record Retry(Roaring64NavigableMap ids, List<Integer> fragments, long rows) {
    /**
     * Where the {@code skipped} parents are, or {@code null} when their fragments cannot be
     * told from the metadata (then every fragment is scanned, which finds them).
     */
    static Retry locate(Source src, SourceChanges changes, List<FragmentMetadata> now,
        Roaring64NavigableMap skipped) {
      Roaring64NavigableMap ids = skipped == null ? ParentIds.empty()
          : ParentIds.minus(skipped, changes.departed);
      if (ids.isEmpty()) {
        return new Retry(ids, List.of(), 0);
      }
      List<Integer> holding = FragmentRowIds.holding(now, ids);
      if (holding == null) {
        LOG.info("Chunker view {}: {} skipped parents cannot be placed in the source's "
            + "fragments by their row ids; scanning every fragment", src.viewName(),
            ids.getLongCardinality());
        return null;
      }
      // a skipped parent in a fragment read anyway is found by that read
      java.util.Set<Integer> more = new java.util.LinkedHashSet<>(holding);
      more.removeAll(changes.rescan);
      long rows = now.stream().filter(f -> more.contains(f.getId()))
          .mapToLong(FragmentMetadata::getPhysicalRows).sum();
      return new Retry(ids, List.copyOf(more), rows);
    }
  }

  /**
   * The change set since the watermark ({@link SourceChanges}), or {@code null} when the two
   * versions cannot be compared (then every fragment is scanned).
   */
  private static SourceChanges changes(Source src, long watermark,
      org.lance.Dataset target, List<FragmentMetadata> now) {
    org.lance.Dataset then;
    try {
      then = src.datasets().source(watermark);
    } catch (MaterializedViewException e) {
      LOG.info("Chunker view {}: source version {} cannot be opened ({}); scanning every "
          + "fragment", src.viewName(), watermark, e.getMessage());
      return null;
    }
    try {
      SourceChanges ch = SourceChanges.between(then, target, now,
          src.ctx().caches().get(LiveRowIds.class, LiveRowIds::new), src.ctx().deletionVectors(),
          "Chunker view " + src.viewName());
      if (ch.diff == null) {
        return null;
      }
      src.ctx().observe(RefreshListener.Probe.FRAGMENT_DIFF, ch.diff);
      return ch;
    } catch (ChunkerRefreshException e) {
      throw e;
    } catch (Exception e) {
      throw new ChunkerRefreshException("Cannot compare the fragments of the source of view '"
          + src.viewName() + "' at versions " + watermark + " and " + target.version() + ": "
          + e.getMessage(), e);
    }
  }

  /** The source's commits after the watermark, up to {@code target}'s version. */
  private static SourceHistory history(Source src, org.lance.Dataset target, long watermark) {
    SourceHistory h = SourceHistory.after(target, watermark);
    if (h.changedInPlace() == null) {
      logUnknown(src, h, watermark);
    }
    return h;
  }

  private static void logUnknown(Source src, SourceHistory h, long watermark) {
    LOG.info("Chunker view {}: the source's history since version {} cannot tell which "
        + "parents changed in place ({}); every processed parent scanned is expanded again",
        src.viewName(), watermark, h.unknown());
  }

  /**
   * Processed parents the history says were changed in place (or, when it cannot tell, every
   * processed parent found) count as changed although their update version may say otherwise.
   */
  private static void changedInPlace(Source src, Found found, Roaring64NavigableMap processed,
      SourceHistory history, long watermark) {
    Roaring64NavigableMap again = ParentIds.and(found.present, processed);
    if (history.changedInPlace() != null) {
      again.and(history.changedInPlace());
    }
    again.andNot(found.changed);
    if (!again.isEmpty()) {
      LOG.info("Chunker view {}: {} processed parents whose update version is not after "
          + "version {} are expanded again ({})", src.viewName(), again.getLongCardinality(),
          watermark, history);
      found.changed.or(again);
      found.expand.or(again);
    }
  }

  private static List<FragmentMetadata> metadata(List<Fragment> fragments) {
    List<FragmentMetadata> out = new ArrayList<>(fragments.size());
    for (Fragment f : fragments) {
      out.add(f.metadata());
    }
    return out;
  }

  /** No filter: Lance's metadata columns of the (scoped) fragments, read on the driver. */
  private static Found scanDriver(org.lance.Dataset target, List<Integer> fragments,
      long watermark, Roaring64NavigableMap processed, Roaring64NavigableMap only) {
    Found found = new Found();
    if (fragments != null && fragments.isEmpty()) {
      return found;
    }
    try {
      SafeLanceScan.scan(target, SafeLanceScan.Request.of(fragments,
          List.of("_row_last_updated_at_version")).withRowIds(), b -> {
            FieldVector upd = b.column("_row_last_updated_at_version");
            for (int i = 0; i < b.rowCount(); i++) {
              long id = b.rowId(i);
              if (only != null && !only.contains(id)) {
                continue;
              }
              long lastUpdated = upd.isNull(i) ? 0 : ((Number) upd.getObject(i)).longValue();
              found.add(id, lastUpdated, watermark, processed);
            }
          });
    } catch (Exception e) {
      throw new ChunkerRefreshException("Cannot scan the row ids of the source at version "
          + target.version() + ": " + e.getMessage(), e);
    }
    return found;
  }

  /**
   * A filter over the changed fragments: Spark evaluates it through lance-spark over just those
   * fragments ({@link FragmentScopedRead}), and the driver keeps the rows that pass.
   */
  private static Found scanFiltered(Source src, org.lance.Dataset target,
      List<Integer> fragments, long watermark, Roaring64NavigableMap processed) {
    if (fragments.isEmpty()) {
      return new Found();
    }
    Found found = new Found();
    src.ctx().describe("filter the rows of " + fragments.size() + " changed source fragments");
    try {
      Dataset<Row> in = FragmentScopedRead.restrict(src.frame(), new java.util.HashSet<>(
          fragments)).where(src.filter()).select(functions.col("_rowid"),
          functions.col("_row_last_updated_at_version"));
      for (Row r : in.collectAsList()) {
        found.add(r.getLong(0), r.isNullAt(1) ? 0 : r.getLong(1), watermark, processed);
      }
    } finally {
      src.ctx().describe(null);
    }
    return found;
  }

  /** {@code column IN (ids)}. */
  static org.apache.spark.sql.Column idsIn(String column, Roaring64NavigableMap ids) {
    Object[] lits = new Object[(int) ids.getLongCardinality()];
    int i = 0;
    for (var it = ids.getLongIterator(); it.hasNext(); ) {
      lits[i++] = it.next();
    }
    return functions.col(column).isin(lits);
  }

  /** A filter over every fragment: Spark evaluates it through lance-spark. */
  private static Found scanSpark(Source src, long watermark, Roaring64NavigableMap processed) {
    Found found = new Found();
    Dataset<Row> in = src.frame().where(src.filter()).select(functions.col("_rowid"),
        functions.col("_row_last_updated_at_version"));
    SparkSession spark = src.spark();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    Broadcast<byte[]> done = jsc.broadcast(ParentIds.toBytes(processed));
    src.ctx().describe("scan source row ids");
    List<byte[][]> parts;
    try {
      parts = in.toJavaRDD().mapPartitions((java.util.Iterator<Row> rows) -> {
        Roaring64NavigableMap p = ParentIds.fromBytes(done.value());
        Found f = new Found();
        while (rows.hasNext()) {
          Row r = rows.next();
          f.add(r.getLong(0), r.isNullAt(1) ? 0 : r.getLong(1), watermark, p);
        }
        return Arrays.<byte[][]>asList(f.toBytes()).iterator();
      }).collect();
    } finally {
      src.ctx().describe(null);
      done.destroy();
    }
    for (byte[][] p : parts) {
      found.or(Found.fromBytes(p));
    }
    return found;
  }
}
