package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a refresh must do to the view, learned from the source: the parents to expand and the
 * processed parents whose children must go.
 *
 * <p><b>Scope.</b> Lance data and deletion files are immutable and a fragment id is never given
 * to another fragment, so a fragment whose metadata (data files, deletion file, physical rows,
 * row-id sequence) is equal at the watermark and at the target version holds exactly the same
 * rows with the same values and row ids. Such fragments are skipped when the view's previous
 * refresh left every filtered row of its source version processed ({@link
 * ChunkerRefresh#UNPROCESSED_KEY} = 0): their filtered rows were all expanded then and are
 * unchanged. Only the fragments that differ are scanned: at the target version for present,
 * new and updated rows, at the watermark for the row ids that were there (a processed id among
 * those that is not present now is gone). Any doubt (watermark version cleaned up, schema
 * changed, unprocessed parents, {@code output_limit}) scans every fragment instead.
 *
 * <p><b>Compactions.</b> A compaction moves rows to new fragments with their row ids, so a
 * compacted fragment is a changed one, and its processed rows are found unchanged by their
 * update version. lance-spark's {@code OPTIMIZE} loses that version (every moved row reports
 * version 1), so the source's commits since the watermark ({@link SourceHistory}) say which
 * rows were changed in place: those are expanded again, and when the history cannot tell,
 * every processed parent scanned is. A changed fragment whose every live row the watermark
 * version had in a changed fragment, and that the history says no commit changed in place,
 * holds only rows that are as they were (moved by a compaction, or left where they were by
 * deletes): it is not scanned at all, and its processed parents stay present.
 *
 * <p><b>Readers.</b> The scan reads only Lance's metadata columns ({@code _rowid}, {@code
 * _row_last_updated_at_version}; neither touches a data file) on the driver through
 * lance-core. A filter is evaluated by Spark through lance-spark: over the changed
 * fragments' rows only ({@code _rowid IN (...)}, answered from Lance's row-id index), or over
 * every fragment in a Spark job. (lance-spark prunes fragments by {@code _rowaddr IN (...)}, but
 * lance-core 4.0.0 matches no row for {@code _rowaddr =} or {@code IN}; ranges work.)
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
  record Source(RefreshContext ctx, ViewTables tables, String filter,
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
   * @param mayScope whether fragments unchanged since the watermark may be skipped (the caller
   *     checked the view's state allows it)
   */
  static SourceState scan(Source src, long watermark, long version,
      Roaring64NavigableMap processed, boolean mayScope) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset target = open(a, src, version)) {
      List<FragmentMetadata> now = metadata(target.getFragments());
      Scope scope = mayScope && watermark > 0
          ? Scope.between(a, src, watermark, target, now) : null;
      SourceHistory history = null;
      Roaring64NavigableMap idsBefore = null;
      SourceHistory.Moved moved = null;
      if (scope != null) {
        idsBefore = scope.rowIdsBefore(a, src, watermark);
        if (!scope.before.isEmpty() && !scope.now.isEmpty()) {
          history = history(src, target, watermark);
          moved = moved(src, history, target, scope, idsBefore, watermark);
        }
      }
      if (scope != null && src.filter() != null && scope.physicalRows > MAX_ID_LITERALS) {
        LOG.info("Chunker view {}: {} rows in changed fragments, more than one row id filter "
            + "holds; scanning every fragment", src.viewName(), scope.physicalRows);
        scope = null;
        moved = null;
      }
      if (scope == null && history == null && watermark > 0 && !processed.isEmpty()) {
        history = history(src, target, watermark);
      }
      if (scope != null) {
        src.ctx().observe(RefreshListener.Probe.SOURCE_FRAGMENTS_READ, List.copyOf(scope.now));
      }
      Found found;
      if (src.filter() == null) {
        found = scanDriver(target, scope == null ? null : scope.now, watermark, processed, null);
      } else if (scope != null) {
        found = scanFiltered(src, target, scope.now, watermark, processed);
      } else {
        found = scanSpark(src, watermark, processed);
      }
      if (history != null) {
        changedInPlace(src, found, processed, history, watermark);
      }
      if (moved != null) {
        // processed rows of fragments not scanned: present, and still passing the filter
        found.present.or(ParentIds.and(moved.ids(), processed));
      }
      Roaring64NavigableMap gone;
      if (scope == null) {
        gone = ParentIds.minus(processed, found.present);
      } else {
        gone = ParentIds.and(processed, idsBefore);
        gone.andNot(found.present);
      }
      String described = scope == null ? "all " + now.size() + " fragments"
          : scope.now.size() + " changed of " + now.size() + " fragments (" + scope.before.size()
              + " changed or removed since version " + watermark + ")" + (moved == null
              || moved.fragments().isEmpty() ? "" : "; " + moved.fragments().size()
              + " more changed ones hold only " + moved.ids().getLongCardinality() + " rows "
              + "unchanged since then (moved by a compaction, or left by deletes), not "
              + "scanned");
      long rows = scope != null ? scope.physicalRows
          : now.stream().mapToLong(FragmentMetadata::getPhysicalRows).sum();
      return new SourceState(found.present, gone, found.changed, found.expand, scope == null,
          described, scope == null ? null : scope.now, now.size(), rows);
    }
  }

  /** The source's commits after the watermark, up to {@code target}'s version. */
  private static SourceHistory history(Source src, org.lance.Dataset target, long watermark) {
    SourceHistory h = SourceHistory.after(target, watermark);
    if (h.changedInPlace() == null) {
      LOG.info("Chunker view {}: the source's history since version {} cannot tell which "
          + "parents changed in place ({}); every processed parent scanned is expanded again",
          src.viewName(), watermark, h.unknown());
    }
    return h;
  }

  /**
   * Takes the changed fragments that hold only rows unchanged since the watermark (moved by a
   * compaction, or left by deletes) out of {@code scope} ({@link SourceHistory#moved}); what was
   * taken, or {@code null} when nothing was.
   */
  private static SourceHistory.Moved moved(Source src, SourceHistory history,
      org.lance.Dataset target, Scope scope, Roaring64NavigableMap idsBefore, long watermark) {
    SourceHistory.Moved m;
    try {
      m = history.moved(target, scope.now, idsBefore);
    } catch (Exception e) {
      throw new ChunkerRefreshException("Cannot read the row ids of the changed fragments of "
          + "the source of view '" + src.viewName() + "' at version " + target.version() + ": "
          + e.getMessage(), e);
    }
    if (m.fragments().isEmpty()) {
      return null;
    }
    scope.now.removeAll(m.fragments());
    for (int f : m.fragments()) {
      scope.physicalRows -= scope.physical.remove(f);
    }
    LOG.info("Chunker view {}: {}; the {} rows of changed fragments {} are unchanged since "
        + "version {} (moved by a compaction, or left by deletes): not scanned", src.viewName(),
        history, m.ids().getLongCardinality(), m.fragments(), watermark);
    return m;
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

  private static org.lance.Dataset open(BufferAllocator a, Source src, long version) {
    try {
      return org.lance.Dataset.open(a, src.tables().sourceUri(), CredentialRefresh.readOptions(src.tables().sourceStorageOptions()).setVersion(version).build());
    } catch (RuntimeException e) {
      throw new ChunkerRefreshException("Cannot open the source of view '" + src.viewName()
          + "' at '" + src.tables().sourceUri() + "' version " + version + ": "
          + e.getMessage(), e);
    }
  }

  private static List<FragmentMetadata> metadata(List<Fragment> fragments) {
    List<FragmentMetadata> out = new ArrayList<>(fragments.size());
    for (Fragment f : fragments) {
      out.add(f.metadata());
    }
    return out;
  }

  /** The fragments that differ between the watermark and the target version. */
  private static final class Scope {
    /** Fragment ids at the target version not identical at the watermark (new or changed). */
    final List<Integer> now = new ArrayList<>();
    /** Fragment ids at the watermark not identical at the target (changed or removed). */
    final List<Integer> before = new ArrayList<>();
    final Map<Integer, Long> physical = new HashMap<>();
    long physicalRows;

    /** {@code null} when the watermark version cannot be compared to the target. */
    static Scope between(BufferAllocator a, Source src, long watermark,
        org.lance.Dataset target, List<FragmentMetadata> now) {
      List<FragmentMetadata> then;
      try (org.lance.Dataset old = open(a, src, watermark)) {
        // columns, not their metadata (a source that is a view changes that at every refresh)
        if (!io.lancerest.spark.mv.SourceIdentity.columnsOnly(old.getSchema().getFields())
            .equals(io.lancerest.spark.mv.SourceIdentity.columnsOnly(
                target.getSchema().getFields()))) {
          LOG.info("Chunker view {}: the source schema changed since version {}; scanning "
              + "every fragment", src.viewName(), watermark);
          return null;
        }
        then = metadata(old.getFragments());
      } catch (ChunkerRefreshException e) {
        LOG.info("Chunker view {}: source version {} cannot be opened ({}); scanning every "
            + "fragment", src.viewName(), watermark, e.getMessage());
        return null;
      }
      Map<Integer, FragmentMetadata> byId = new HashMap<>();
      for (FragmentMetadata f : then) {
        byId.put(f.getId(), f);
      }
      Scope s = new Scope();
      TreeSet<Integer> same = new TreeSet<>();
      for (FragmentMetadata f : now) {
        if (f.equals(byId.get(f.getId()))) {
          same.add(f.getId());
        } else {
          s.now.add(f.getId());
          s.physical.put(f.getId(), f.getPhysicalRows());
          s.physicalRows += f.getPhysicalRows();
        }
      }
      for (FragmentMetadata f : then) {
        if (!same.contains(f.getId())) {
          s.before.add(f.getId());
        }
      }
      return s;
    }

    /** Row ids in the changed or removed fragments at the watermark. */
    Roaring64NavigableMap rowIdsBefore(BufferAllocator a, Source src, long watermark) {
      Roaring64NavigableMap ids = new Roaring64NavigableMap();
      if (before.isEmpty()) {
        return ids;
      }
      try (org.lance.Dataset old = open(a, src, watermark)) {
        SafeLanceScan.scan(old, SafeLanceScan.Request.of(before, List.of()).withRowIds(), b -> {
          for (int i = 0; i < b.rowCount(); i++) {
            ids.addLong(b.rowId(i));
          }
        });
      } catch (ChunkerRefreshException e) {
        throw e;
      } catch (Exception e) {
        throw new ChunkerRefreshException("Cannot read the row ids of source version "
            + watermark + " of view '" + src.viewName() + "': " + e.getMessage(), e);
      }
      return ids;
    }
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
   * A filter over the changed fragments: their row ids come from the driver's metadata scan,
   * Spark evaluates the filter on just those rows ({@code _rowid IN (...)}, which Lance answers
   * from its row-id index), and the driver keeps the rows that pass.
   */
  private static Found scanFiltered(Source src, org.lance.Dataset target,
      List<Integer> fragments, long watermark, Roaring64NavigableMap processed) {
    if (fragments.isEmpty()) {
      return new Found();
    }
    Found all = scanDriver(target, fragments, watermark, ParentIds.empty(), null);
    if (all.present.isEmpty()) {
      return all;
    }
    Roaring64NavigableMap passing = new Roaring64NavigableMap();
    SparkSession spark = src.spark();
    src.ctx().describe("filter " + all.present.getLongCardinality()
        + " rows of changed source fragments");
    try {
      Dataset<Row> in = src.frame().where(idsIn("_rowid", all.present)).where(src.filter())
          .select(functions.col("_rowid"));
      for (Row r : in.collectAsList()) {
        passing.addLong(r.getLong(0));
      }
    } finally {
      src.ctx().describe(null);
    }
    return scanDriver(target, fragments, watermark, processed, passing);
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
