package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.connector.Memoized;
import io.lancerest.spark.connector.ScanBatchRows;
import io.lancerest.spark.mv.GenevaLayout;
import io.lancerest.spark.mv.MaterializedViewException;
import io.lancerest.spark.mv.MaterializedViewKind;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.RefreshPlan;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.SourceIdentity;
import io.lancerest.spark.mv.SourceQuery;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import io.lancerest.spark.mv.rowindex.SourceIdIndexCache;
import io.lancerest.spark.mv.rowindex.ViewRowLookup;
import io.lancerest.spark.mv.rowindex.ViewRows;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.fragments.FragmentDiff;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.fragments.LiveRowIds;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.RefreshDriver;
import io.lancerest.spark.mv.refresh.SourceVersions;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Incremental refresh of a query view to a source version, as ONE atomic {@link ViewCommit}.
 *
 * <p>With {@code S} the row ids of the filtered source at the target version, {@code U} those
 * of them updated after the watermark ({@code _row_last_updated_at_version > watermark}), and
 * {@code V} the {@code __source_row_id}s in the view:
 * <ul>
 *   <li>rows of {@code V − S} are deleted (source row deleted, or no longer matching the
 *       filter);</li>
 *   <li>rows of {@code V ∩ U} are deleted and re-projected (updated in place, same row id);</li>
 *   <li>rows of {@code S − V} are appended (new source rows, or rows that entered the filter).
 *       lance-spark's UPDATE gives the row a new {@code _rowid}: the old id is then in {@code V −
 *       S} and the new one in {@code S − V}, so it is a delete plus an insert.</li>
 * </ul>
 * Spark tasks write the new rows as uncommitted fragments; the driver commits deletions, new
 * fragments, the watermark (field metadata on {@code __source_row_id}), the base table version
 * and the last job in one Overwrite read at the view version the refresh started from. A crash
 * or failure before that commit leaves the view at its version; the next refresh recomputes the
 * same change from the same state. A concurrent commit to the view makes the commit fail; the
 * refresh is then recomputed from the new version ({@link RefreshDriver}).
 */
public final class QueryRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(QueryRefresh.class);
  /** More runs of ids than this and tasks filter by a broadcast set instead of pushed ranges. */
  private static final int MAX_PUSHED_RUNS = 64;

  /**
   * View schema metadata: when the source version the view reflects was written, to tell a
   * source table replaced under the same name from the one the view was refreshed from.
   */
  public static final String SOURCE_VERSION_TIME = SourceIdentity.KEY;
  /** Rows of changed source fragments one incremental write task takes on. */
  static final long ROWS_PER_TASK = 1L << 20;

  private QueryRefresh() {}

  /** Refreshes the view in {@code ctx} (its job id, listener, caches and job). */
  public static RefreshResult run(RefreshContext ctx, ViewTables t, SourceQuery query,
      RefreshOptions options) {
    return RefreshDriver.refresh(ctx, t, options.srcVersion(), options.maxRowsPerFragment(),
        () -> SourceVersions.latest(
        t.viewName(), t.sourceUri(), t.sourceStorageOptions()), kind(t, query, options));
  }

  /**
   * What {@link #run} would do now, with nothing written or committed ({@code EXPLAIN REFRESH});
   * the same options are checked and the same errors raised as by a refresh.
   */
  public static RefreshPlan explain(SparkSession spark, ViewTables t, SourceQuery query,
      RefreshOptions options) {
    RefreshContext ctx = new RefreshContext(spark, t.viewName(), "explain", null);
    return RefreshDriver.explain(ctx, options.srcVersion(), () -> SourceVersions.latest(
        t.viewName(), t.sourceUri(), t.sourceStorageOptions()), kind(t, query, options));
  }

  /** Query views in {@link RefreshDriver}'s sequence: one {@link Run} per attempt. */
  private static ViewRefresh<RefreshResult> kind(ViewTables t, SourceQuery q, RefreshOptions o) {
    return ViewRefresh.of(MaterializedViewKind.QUERY, r -> new ViewRefresh.Outcome(r.status(),
        r.sourceVersion(), r.rowsInserted(), r.rowsDeleted(), r.skipped()),
        (ctx, srcVersion) -> new Run(ctx, t, q, o).prepare(srcVersion));
  }

  /** Source versions must have stable row ids, or {@code __source_row_id} means nothing. */
  static void requireStableRowIds(List<FragmentMetadata> fragments, String viewName,
      long version) {
    // every fragment of a dataset shares the setting: one is enough
    if (!fragments.isEmpty() && fragments.get(0).getRowIdMeta() == null) {
      throw new QueryRefreshException(StableRowIds.missingMessage(viewName, version));
    }
  }

  /** One attempt. */
  private static final class Run {
    final RefreshContext ctx;
    final SparkSession spark;
    final ViewTables t;
    final SourceQuery q;
    final RefreshOptions o;
    final String jobId;
    /** When the source version this run refreshes to was written ({@link #versionTime}). */
    String srcVersionTime;

    Run(RefreshContext ctx, ViewTables t, SourceQuery q, RefreshOptions o) {
      this.ctx = ctx;
      this.spark = ctx.spark();
      this.t = t;
      this.q = q;
      this.o = o;
      this.jobId = ctx.jobId();
    }

    /** What a refresh reads before it decides anything; the same for REFRESH and EXPLAIN. */
    private final class Prepared implements ViewRefresh.Attempt<RefreshResult> {
      long readVersion;
      Schema viewArrow;
      long viewRows;
      long watermark;
      long srcVersion;
      int sourceFragments;
      /** The source's fragments at {@link #srcVersion}, listed once for the whole refresh. */
      List<FragmentMetadata> sourceAt;
      /** Rows a batch of a Spark read of the whole source, as the catalog reads it. */
      int sourceBatchRows;
      long sourceRows;
      Schema plain;
      StructType target;
      boolean replaceAll;
      /**
       * Why the view is rebuilt although it has a watermark: a cleanup removed that version of
       * the source ({@link SourceVersions#removedByCleanup}); {@code null} otherwise.
       */
      String watermarkRemoved;

      @Override
      public boolean upToDate() {
        return Run.this.upToDate(this);
      }

      @Override
      public RefreshResult skipped() {
        return new RefreshResult(jobId, RefreshResult.JobStatus.SKIPPED,
            MaterializedViewKind.QUERY, srcVersion, 0, 0, 0, ctx.elapsedMillis());
      }

      @Override
      public RefreshPlan explain() {
        return Run.this.explain(this);
      }

      @Override
      public StagedRefresh<RefreshResult> compute() {
        return Run.this.compute(this);
      }
    }

    Prepared prepare(long srcVersion) {
      Prepared p = new Prepared();
      // 1. the view at the version this refresh reads, and will commit on top of
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset view = open(a, t.viewUri(), t.viewStorageOptions(), null, "view")) {
        p.readVersion = view.version();
        p.viewArrow = view.getSchema();
        p.viewRows = view.countRows();
      }
      p.watermark = watermark(p.viewArrow);
      // 2. the source version to refresh to
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset src = open(a, t.sourceUri(), t.sourceStorageOptions(), null,
              "source table")) {
        long latest = src.latestVersion();
        p.srcVersion = srcVersion;
        // Before the version rule: a replaced source usually has fewer versions than the
        // watermark, and "cannot be refreshed backwards" would hide what happened.
        requireSameSource(a, p.viewArrow, p.watermark, latest);
        SourceVersions.requireForward(t.viewName(), p.srcVersion, p.watermark);
        if (p.watermark > 0 && p.srcVersion != p.watermark && !o.force()) {
          // Without that version neither the fragments nor the history since can be compared,
          // and the update versions of rows a compaction moved may be wrong (SourceHistory):
          // only a rebuild is sure to be right.
          p.watermarkRemoved = SourceVersions.removedByCleanup(t.viewName(), t.sourceUri(),
              t.sourceStorageOptions(), p.watermark);
        }
        try (org.lance.Dataset at = p.srcVersion == src.version() ? null
            : open(a, t.sourceUri(), t.sourceStorageOptions(), p.srcVersion, "source table")) {
          org.lance.Dataset ds = at == null ? src : at;
          p.sourceAt = FragmentDiff.metadata(ds.getFragments());
          p.sourceBatchRows = ScanBatchRows.forDataset(ds);
          requireStableRowIds(p.sourceAt, t.viewName(), p.srcVersion);
          srcVersionTime = versionTime(ds);
          p.sourceFragments = p.sourceAt.size();
          p.sourceRows = ds.countRows();
        }
      }
      p.plain = withoutMetadata(p.viewArrow);
      p.target = LanceArrowUtils.fromArrowSchema(p.plain);
      p.replaceAll = o.force() || p.viewRows == 0 || p.watermarkRemoved != null;
      return p;
    }

    /** The reason of a rebuild when the watermark version is gone, for the log and EXPLAIN. */
    private String watermarkRemovedReason(Prepared p) {
      return p.watermarkRemoved + "; what changed since then cannot be told, so the view is "
          + "rebuilt from source version " + p.srcVersion;
    }

    /** Why a refresh rebuilds the view, in the words of its log line. */
    private String rebuildReason(Prepared p) {
      if (o.force()) {
        return "force";
      }
      if (p.watermarkRemoved != null) {
        return "source version " + p.watermark + ", its watermark, was removed by a cleanup";
      }
      if (p.viewRows == 0) {
        return p.watermark == 0 ? "first refresh" : "the view is empty";
      }
      return "the source's history cannot tell which rows changed in place";
    }

    /**
     * The source's history since the watermark, for the row scan ({@link #sourceState}): the
     * rows changed in place that their update versions may not show ({@link SourceHistory});
     * {@code null} for a rebuild or a view without a watermark.
     */
    private SourceHistory rowScanHistory(Prepared p) {
      if (p.replaceAll || p.watermark == 0) {
        return null;
      }
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset now = open(a, t.sourceUri(), t.sourceStorageOptions(), p.srcVersion,
              "source table")) {
        return SourceHistory.after(now, p.watermark);
      }
    }

    private String unknownHistoryReason(Prepared p, SourceHistory h) {
      return "the source's history since version " + p.watermark + " cannot tell which rows "
          + "changed in place (" + h.unknown() + "), so the view is rebuilt from source version "
          + p.srcVersion;
    }

    /** Whether the view already reflects the source version (and nothing forces a rebuild). */
    boolean upToDate(Prepared p) {
      return p.srcVersion == p.watermark && !o.force();
    }

    /** Whether only the changed source fragments are read ({@link #changes}). */
    private boolean byFragmentsPossible(Prepared p) {
      return !p.replaceAll && q.limit() == null && p.watermark > 0
          && ctx.listener().readChangedFragmentsOnly();
    }

    StagedRefresh<RefreshResult> compute(Prepared p) {
      long readVersion = p.readVersion;
      long watermark = p.watermark;
      long srcVersion = p.srcVersion;
      Schema plain = p.plain;
      StructType target = p.target;
      QueryLayout.requireColumns(q, target, t.viewName());

      // 3. which source rows are in the view now, and which changed since the watermark
      boolean replaceAll = p.replaceAll;
      if (p.watermarkRemoved != null) {
        LOG.warn("View {} (job {}): {}", t.viewName(), jobId, watermarkRemovedReason(p));
      }
      if (byFragmentsPossible(p)) {
        SourceChanges ch = changes(p);
        if (ch.diff != null) {
          return byFragments(readVersion, watermark, srcVersion, plain, target, ch);
        }
      }
      SourceHistory history = rowScanHistory(p);
      if (history != null && history.changedInPlace() == null) {
        LOG.warn("View {} (job {}): {}", t.viewName(), jobId, unknownHistoryReason(p, history));
        replaceAll = true;
      }
      long viewRows = p.viewRows;
      // Built only here: planning a lance-spark read of the whole source opens it and analyses
      // the SELECT, which the fragment-diff path above does not need.
      Dataset<Row> source = QueryLayout.readSource(spark, t.sourceUri(),
          t.sourceStorageOptions(), srcVersion, p.sourceBatchRows);
      Dataset<Row> projected = QueryLayout.project(source, q, target, t.viewName());
      // A rebuild without LIMIT writes every filtered source row: no id scan needed.
      boolean everything = replaceAll && q.limit() == null;
      long t0 = System.currentTimeMillis();
      Roaring64NavigableMap[] su = everything
          ? new Roaring64NavigableMap[] {Roaring64NavigableMap.bitmapOf(),
              Roaring64NavigableMap.bitmapOf()}
          : sourceState(source, watermark, !replaceAll);
      long t1 = System.currentTimeMillis();
      Roaring64NavigableMap inSource = su[0];
      Roaring64NavigableMap updated = su[1];
      if (!replaceAll && history != null) {
        updated.or(history.changedInPlace());
      }
      Roaring64NavigableMap inView = Roaring64NavigableMap.bitmapOf();
      List<Long> deletes = new ArrayList<>();
      if (!replaceAll) {
        viewState(readVersion, inSource, updated, inView, deletes);
      }
      long t2 = System.currentTimeMillis();
      Roaring64NavigableMap changed = RowIdSet.intersection(inView, updated);
      Roaring64NavigableMap fresh = RowIdSet.difference(inSource, inView);
      if (q.limit() != null) {
        long kept = replaceAll ? 0 : inView.getLongCardinality() - deletes.size()
            + changed.getLongCardinality();
        long room = Math.max(0, q.limit() - kept);
        if (fresh.getLongCardinality() > room) {
          fresh = RowIdSet.smallest(fresh, room);
        }
      }
      Roaring64NavigableMap toWrite = RowIdSet.difference(fresh, changed);
      toWrite.or(changed);
      if (replaceAll) {
        // A rebuild does not look at which rows are in the view (all go), and without LIMIT it
        // does not collect the source's row ids either: what it writes is counted by the write.
        LOG.info("View {} (job {}): source version {} (watermark {}): rebuilding the view ({}): "
            + "{} of the {} source rows, replacing the {} rows in the view", t.viewName(), jobId,
            srcVersion, watermark, rebuildReason(p), everything
            ? "writing every row the definition selects" : "writing " + toWrite
            .getLongCardinality() + " (LIMIT " + q.limit() + ")", p.sourceRows, viewRows);
      } else {
        LOG.info("View {} (job {}): source version {} (watermark {}): {} source rows, {} in the "
            + "view; writing {} ({} changed in place), deleting {}", t.viewName(), jobId,
            srcVersion, watermark, inSource.getLongCardinality(), inView.getLongCardinality(),
            toWrite.getLongCardinality(), changed.getLongCardinality(), deletes.size());
      }

      // 4. new rows, written by Spark tasks as uncommitted fragments
      Written w = everything
          ? write(projected, plain, WriteTask.every(t, plain, o), 0)
          : toWrite.isEmpty() ? new Written(List.of(), 0, null, List.of())
          : write(projected, plain, toWrite.getLongCardinality() == inSource.getLongCardinality()
              ? WriteTask.every(t, plain, o) : WriteTask.only(t, plain, o, toWrite), 0);
      long t3 = System.currentTimeMillis();
      // 5. one commit: deletions, new fragments, watermark, base version, last job
      return commit(readVersion, srcVersion, w.fragments, w.ranges, deletes, replaceAll,
          String.format("source scan %d ms, view scan %d ms, write %d ms", t1 - t0, t2 - t1,
              t3 - t2));
    }

    /**
     * What {@link #execute} would do, found the same way up to the write, with nothing written
     * or committed. The view rows to delete and to write are counted: on the fragment-diff path
     * by looking the departed source rows up in the view and counting the filtered rows of the
     * changed fragments (a Spark count of those fragments), on a rebuild by counting the
     * filtered source.
     */
    RefreshPlan explain(Prepared p) {
      if (upToDate(p)) {
        return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY, RefreshPlan.Mode.NO_OP,
            "the view already reflects source version " + p.srcVersion, p.watermark,
            p.srcVersion, p.sourceFragments, List.of(), 0, p.viewRows, 0L, 0L,
            RefreshPlan.Write.NONE, null, "");
      }
      QueryLayout.requireColumns(q, p.target, t.viewName());
      Long from = p.watermark == 0 ? null : p.watermark;
      String fallback = null;
      if (byFragmentsPossible(p)) {
        SourceChanges ch = changes(p);
        if (ch.diff != null) {
          ViewRows inView = ch.departed.isEmpty() ? new ViewRows()
              : viewRowsOf(p.readVersion, ch.departed);
          long write = 0;
          RefreshPlan.Write where = RefreshPlan.Write.NONE;
          Integer tasks = null;
          String note = "";
          if (!ch.rescan.isEmpty()) {
            Dataset<Row> scoped = FragmentScopedRead.restrict(QueryLayout.readSource(spark,
                t.sourceUri(), t.sourceStorageOptions(), p.srcVersion),
                new HashSet<>(ch.rescan));
            write = QueryLayout.filtered(scoped, q).count();
            String declined = LocalRefreshWrite.declines(spark, ch.rescanRows);
            if (declined == null) {
              where = RefreshPlan.Write.DRIVER;
              note = "a Spark job of " + writeTasks(ch.rescan.size(),
                  packTasks(ch.rescanRows)) + " tasks writes instead if the definition cannot "
                  + "run on the driver (a Python UDF, a subquery ...)";
            } else {
              where = RefreshPlan.Write.SPARK_JOB;
              tasks = writeTasks(ch.rescan.size(), packTasks(ch.rescanRows));
              note = "not on the driver: " + declined;
            }
          }
          String reason = "source changed since version " + p.watermark + ": " + ch.diff
              + "; " + ch.departed.getLongCardinality() + " source rows left changed fragments"
              + (ch.moved == 0 ? "" : ", " + ch.moved + " more were only moved by a compaction "
              + "and are kept without reading them");
          List<String> notes = new ArrayList<>();
          if (!note.isEmpty()) {
            notes.add(note);
          }
          boolean both = !ch.rescan.isEmpty() && !ch.departed.isEmpty();
          if (both && ch.history.changedInPlace() == null) {
            notes.add("the source's history since version " + p.watermark + " cannot tell "
                + "which rows a compaction moved unchanged (" + ch.history.unknown() + "): "
                + "the rows of changed fragments that were in the view are written again");
          } else if (both) {
            notes.add("rows in the view that a compaction only moved are kept, not rewritten, "
                + "and count on both sides");
          }
          return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY,
              RefreshPlan.Mode.INCREMENTAL, reason, from, p.srcVersion, p.sourceFragments,
              ch.rescan, ch.rescanRows, p.viewRows, (long) inView.size(), write, where, tasks,
              String.join("; ", notes));
        }
        fallback = ch.why;
      }
      Dataset<Row> source = QueryLayout.readSource(spark, t.sourceUri(),
          t.sourceStorageOptions(), p.srcVersion);
      long filtered = QueryLayout.filtered(source, q).count();
      if (q.limit() != null) {
        filtered = Math.min(filtered, q.limit());
      }
      int tasks = writeTasks(p.sourceFragments, 0);
      SourceHistory history = rowScanHistory(p);
      if (p.replaceAll || history != null && history.changedInPlace() == null) {
        String reason = o.force() ? "force = true"
            : p.watermarkRemoved != null ? watermarkRemovedReason(p)
            : p.replaceAll ? "the view is empty" : unknownHistoryReason(p, history);
        return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY, RefreshPlan.Mode.FULL,
            reason, from, p.srcVersion, p.sourceFragments, null, p.sourceRows, p.viewRows,
            p.viewRows, filtered, RefreshPlan.Write.SPARK_JOB, tasks, "");
      }
      String reason = q.limit() != null ? "LIMIT view: every source row id is compared with the "
          + "view's" : p.watermark == 0 ? "the view has no recorded source version"
          : !ctx.listener().readChangedFragmentsOnly() ? "fragment comparison is off"
          : fallback + "; every source row id is compared with the view's";
      return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY,
          RefreshPlan.Mode.INCREMENTAL, reason, from, p.srcVersion, p.sourceFragments, null,
          p.sourceRows, p.viewRows, null, null, RefreshPlan.Write.SPARK_JOB, tasks,
          "the rows to delete and to write are known only after comparing every row id; the "
          + "view will hold " + filtered + " rows");
    }

    /** Tasks of a write over {@code partitions} input partitions ({@link #write}). */
    private int writeTasks(int partitions, int packTasks) {
      int limit = o.concurrency() != null ? o.concurrency()
          : packTasks == 0 ? 0
          : Math.max(packTasks, Math.min(partitions, spark.sparkContext().defaultParallelism()));
      return limit > 0 && partitions > limit ? limit : Math.max(1, partitions);
    }

    private static int packTasks(long rows) {
      return (int) Math.min(Integer.MAX_VALUE, Math.max(1, (rows + ROWS_PER_TASK - 1)
          / ROWS_PER_TASK));
    }

    /**
     * How the source changed between the watermark and the target version ({@link
     * SourceChanges}); {@code diff == null} (with {@code why}) when the two versions cannot be
     * compared (then every row id is compared instead).
     */
    private SourceChanges changes(Prepared p) {
      long watermark = p.watermark;
      long srcVersion = p.srcVersion;
      describe("compare source fragments of versions " + watermark + " and " + srcVersion);
      long t0 = System.currentTimeMillis();
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset now = open(a, t.sourceUri(), t.sourceStorageOptions(), srcVersion,
              "source table")) {
        org.lance.Dataset then;
        try {
          then = open(a, t.sourceUri(), t.sourceStorageOptions(), watermark, "source table");
        } catch (QueryRefreshException e) {
          LOG.info("View {} (job {}): source version {} cannot be opened ({}); scanning every "
              + "row", t.viewName(), jobId, watermark, e.getMessage());
          return SourceChanges.notComparable("source version " + watermark + " can no longer "
              + "be opened (cleaned up?)", t0);
        }
        try (then) {
          SourceChanges ch = SourceChanges.between(then, now, p.sourceAt,
              ctx.caches().get(LiveRowIds.class, LiveRowIds::new), ctx.deletionVectors(),
              "View " + t.viewName() + " (job " + jobId + ")");
          ctx.observe(RefreshListener.Probe.ROW_ID_SETS_CACHED, (long) ch.cachedSets);
          return ch;
        }
      } catch (QueryRefreshException e) {
        throw e;
      } catch (Exception e) {
        throw new QueryRefreshException("Cannot compare the fragments of the source of view "
            + t.viewName() + " at versions " + watermark + " and " + srcVersion + ": "
            + e.getMessage(), e);
      }
    }

    /**
     * The refresh from the fragments that changed since the watermark ({@link #changes}): a
     * row of the filtered new and rewritten fragments ({@code N}) that is in the view, not
     * updated since the watermark ({@code _row_last_updated_at_version}) and not changed in
     * place by the source's commits since ({@link Changes#keepable}: a compaction may have lost
     * its update version) is kept (a compaction moved it); every other row of {@code N} is
     * written; every view row of a departed source
     * row not kept is deleted. Rows of unchanged fragments are the same rows with the same
     * values as at the watermark, and the view is exact for that version, so they need nothing.
     */
    private StagedRefresh<RefreshResult> byFragments(long readVersion, long watermark, long srcVersion,
        Schema plain, StructType target, SourceChanges ch) {
      FragmentDiff diff = ch.diff;
      List<Integer> rescan = ch.rescan;
      long rescanRows = ch.rescanRows;
      ctx.observe(RefreshListener.Probe.SOURCE_FRAGMENTS_READ, List.copyOf(rescan));
      ctx.observe(RefreshListener.Probe.FRAGMENT_DIFF, diff);
      long t1 = System.currentTimeMillis();
      // the view rows of the source rows that left changed fragments
      ViewRows inView = ch.departed.isEmpty() ? new ViewRows()
          : viewRowsOf(readVersion, ch.departed);
      long t2 = System.currentTimeMillis();
      LOG.info("View {} (job {}): source version {} (watermark {}): {}; {} source rows left "
          + "changed fragments, {} of them in the view ({})", t.viewName(), jobId, srcVersion,
          watermark, diff + (ch.byCommits ? " (only those the commits since touched were "
              + "compared)" : " (every fragment of both versions compared)"),
          ch.departed.getLongCardinality(), inView.size(), inView.describe());
      Written w = new Written(List.of(), 0, Roaring64NavigableMap.bitmapOf(), List.of());
      String localPhases = "";
      if (!rescan.isEmpty()) {
        // Built only when needed: the driver path reuses the previous refresh's compiled plan
        // when it can, and planning is a large part of a small refresh.
        Supplier<Dataset<Row>> projected = Memoized.of(() -> QueryLayout.project(
            FragmentScopedRead.restrict(QueryLayout.readSource(spark, t.sourceUri(),
                t.sourceStorageOptions(), srcVersion), new HashSet<>(rescan)), q, target,
            t.viewName(), functions.col("_row_last_updated_at_version")));
        // The changed fragments are usually a few small ones (each append or UPDATE adds its
        // own): pack them into one task per ROWS_PER_TASK rows, not one per fragment, so that
        // the refresh pays the per-task cost (dataset open, fragment write) a few times and the
        // view gets a few fragments instead of as many as the source's commits. write() still
        // uses up to the cluster's parallelism when there are that many changed partitions.
        int tasks = packTasks(rescanRows);
        // Few changed rows: the same write on the driver, without a Spark job's fixed cost.
        describe("write changed rows on the driver");
        LocalRefreshWrite.Outcome local = LocalRefreshWrite.tryWrite(spark, t, q,
            ch.sourceFields, o.maxRowsPerFragment() == null ? 0 : o.maxRowsPerFragment(),
            srcVersion, rescan, rescanRows, plain, target, projected, ch.keepable(inView.ids),
            watermark,
            ctx.listener()::afterTaskBatch, jobId, ctx.listener(),
            ctx.caches().get(CompiledPlans.class, CompiledPlans::new));
        LOG.info("View {} (job {}): write on the {}: {}", t.viewName(), jobId,
            local.written() != null ? "driver" : "Spark path", local.why());
        if (local.written() != null) {
          ctx.observe(RefreshListener.Probe.WRITE_PATH, "driver");
          w = local.written();
          localPhases = ", " + local.phases();
        } else {
          ctx.observe(RefreshListener.Probe.WRITE_PATH, "spark: " + local.why());
          w = write(projected.get(), plain, WriteTask.keeping(t, plain, o,
              ch.keepable(inView.ids), watermark, target.fields().length), tasks);
        }
      }
      long t3 = System.currentTimeMillis();
      List<Long> deletes = new ArrayList<>();
      for (int i = 0; i < inView.size(); i++) {
        if (!w.kept.contains(inView.sourceRowId(i))) {
          deletes.add(inView.address(i));
        }
      }
      return commit(readVersion, srcVersion, w.fragments, w.ranges, deletes, false,
          String.format("fragment diff %d ms (%d rescanned), view scan %d ms, write %d ms%s",
              ch.millis, rescan.size(), t2 - t1, t3 - t2, localPhases));
    }

    /**
     * {@code __source_row_id → _rowaddr} of the view rows whose source row is in {@code ids}
     * ({@link ViewRowLookup}: by the fragments' ranges and source id indexes, reading only the
     * fragments that have none).
     */
    private ViewRows viewRowsOf(long version, Roaring64NavigableMap ids) {
      describe("find " + ids.getLongCardinality() + " source rows in the view");
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset view = open(a, t.viewUri(), t.viewStorageOptions(), version,
              "view")) {
        ViewRows out = new ViewRowLookup(t.viewUri(), t.viewStorageOptions(),
            ctx.caches().get(SourceIdIndexCache.class, SourceIdIndexCache::new),
            ctx.deletionVectors()).find(view, a, ids);
        ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_READ, out.lookedAt());
        ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_SCANNED, out.scanned());
        return out;
      } catch (QueryRefreshException e) {
        throw e;
      } catch (Exception e) {
        throw new QueryRefreshException("Cannot scan view " + t.viewName() + " at version "
            + version + ": " + e.getMessage(), e);
      }
    }

    /**
     * @param ranges {@code {min, max}} source row id of each of {@code fragments} (recorded for
     *     {@link #viewRowsOf}), or {@code null} / {@code null} entries when unknown
     */
    private StagedRefresh<RefreshResult> commit(long readVersion, long srcVersion,
        List<FragmentMetadata> fragments, List<FragmentSourceRanges.Range> ranges, List<Long> deletes,
        boolean replaceAll, String phases) {
      long t3 = System.currentTimeMillis();
      ViewCommit.Builder commit = ViewCommit.builder(t.viewUri(), readVersion)
          .storageOptions(t.viewStorageOptions())
          .deleteRowAddresses(deletes)
          .addFragments(fragments, ranges)
          .fieldMetadata(GenevaLayout.SOURCE_ROW_ID,
              Map.of(GenevaLayout.WATERMARK, String.valueOf(srcVersion)))
          .schemaMetadata(Map.of(GenevaLayout.BASE_TABLE_VERSION, String.valueOf(srcVersion),
              SOURCE_VERSION_TIME, srcVersionTime))
          .job(new ViewCommit.Job(jobId, MaterializedViewKind.QUERY,
              RefreshResult.JobStatus.DONE, srcVersion));
      if (replaceAll) {
        commit.replaceAllRows();
      }
      return new StagedRefresh<>(commit.build(), null, r -> {
        LOG.info("View {} (job {}): phases: {}, commit {} ms", t.viewName(), jobId, phases,
            System.currentTimeMillis() - t3);
        RefreshResult result = new RefreshResult(jobId, RefreshResult.JobStatus.DONE,
            MaterializedViewKind.QUERY, srcVersion, r.rowsAdded(), r.rowsDeleted(), 0,
            ctx.elapsedMillis());
        LOG.info("View {} (job {}): committed view version {}: {} rows inserted, {} deleted, "
            + "source version {}, {} ms", t.viewName(), jobId, r.version(), r.rowsAdded(),
            r.rowsDeleted(), srcVersion, result.durationMs());
        return result;
      }, null);
    }

    /**
     * Refuses a source that is not the dataset the view was refreshed from: a table dropped and
     * created again under the same name restarts its versions, and its row ids and version
     * numbers would be read as those of the old one. The view records when the source version
     * it reflects was written ({@value #SOURCE_VERSION_TIME}); that version of the source must
     * still have been written then.
     */
    private void requireSameSource(BufferAllocator a, Schema view, long watermark, long latest) {
      SourceIdentity.require(t.viewName(), t.sourceUri(), t.sourceStorageOptions(),
          view.getCustomMetadata(), watermark, latest);
    }

    private void describe(String phase) {
      ctx.describe(phase);
    }

    private long watermark(Schema view) {
      Field f;
      try {
        f = view.findField(GenevaLayout.SOURCE_ROW_ID);
      } catch (IllegalArgumentException e) {
        throw new QueryRefreshException("Table of view " + t.viewName() + " has no "
            + GenevaLayout.SOURCE_ROW_ID + " column; it is not a query view table");
      }
      String w = f.getMetadata() == null ? null : f.getMetadata().get(GenevaLayout.WATERMARK);
      if (w == null || w.isBlank()) {
        return 0;
      }
      try {
        return Long.parseLong(w.trim());
      } catch (NumberFormatException e) {
        throw new QueryRefreshException("View " + t.viewName() + " has an unreadable "
            + "watermark '" + w + "' (" + GenevaLayout.WATERMARK + ")");
      }
    }

    /** [ids of the filtered source, those of them updated after the watermark]. */
    private Roaring64NavigableMap[] sourceState(Dataset<Row> source, long watermark,
        boolean wantUpdated) {
      describe("scan source row ids");
      Dataset<Row> ids = QueryLayout.filtered(source, q).select(functions.col("_rowid"),
          wantUpdated ? functions.col("_row_last_updated_at_version")
              : functions.lit(0L).as("u"));
      List<byte[][]> parts = ids.queryExecution().toRdd().toJavaRDD()
          .mapPartitions((FlatMapFunction<Iterator<InternalRow>, byte[][]>) rows -> {
            Roaring64NavigableMap all = Roaring64NavigableMap.bitmapOf();
            Roaring64NavigableMap upd = Roaring64NavigableMap.bitmapOf();
            while (rows.hasNext()) {
              InternalRow r = rows.next();
              long id = r.getLong(0);
              all.addLong(id);
              // An unknown update version (NULL) counts as updated, as in WriteTask.keeping:
              // re-projecting a row that did not change only costs time, keeping a row that
              // did change leaves stale values in the view.
              if (wantUpdated && (r.isNullAt(1) || r.getLong(1) > watermark)) {
                upd.addLong(id);
              }
            }
            byte[][] out = {RowIdSet.serialize(all), RowIdSet.serialize(upd)};
            return java.util.Collections.singletonList(out).iterator();
          }).collect();
      Roaring64NavigableMap all = Roaring64NavigableMap.bitmapOf();
      Roaring64NavigableMap upd = Roaring64NavigableMap.bitmapOf();
      for (byte[][] p : parts) {
        all.or(RowIdSet.deserialize(p[0]));
        upd.or(RowIdSet.deserialize(p[1]));
      }
      return new Roaring64NavigableMap[] {all, watermark == 0 ? Roaring64NavigableMap.bitmapOf()
          : upd};
    }

    /**
     * Scans the view at {@code version}: fills {@code inView} with its source row ids and
     * {@code deletes} with the addresses of rows that are gone or changed.
     */
    private void viewState(long version, Roaring64NavigableMap inSource,
        Roaring64NavigableMap updated, Roaring64NavigableMap inView, List<Long> deletes) {
      describe("scan view rows");
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      Broadcast<byte[]> src = jsc.broadcast(RowIdSet.serialize(inSource));
      Broadcast<byte[]> upd = jsc.broadcast(RowIdSet.serialize(updated));
      List<ViewPart> parts;
      try {
        Dataset<Row> view = QueryLayout.readSource(spark, t.viewUri(), t.viewStorageOptions(),
            version).select(functions.col(GenevaLayout.SOURCE_ROW_ID), functions.col("_rowaddr"));
        parts = view.queryExecution().toRdd().toJavaRDD()
            .mapPartitions((FlatMapFunction<Iterator<InternalRow>, ViewPart>) rows -> {
              Roaring64NavigableMap s = RowIdSet.deserialize(src.value());
              Roaring64NavigableMap u = RowIdSet.deserialize(upd.value());
              Roaring64NavigableMap ids = Roaring64NavigableMap.bitmapOf();
              List<Long> del = new ArrayList<>();
              while (rows.hasNext()) {
                InternalRow r = rows.next();
                long id = r.getLong(0);
                ids.addLong(id);
                if (!s.contains(id) || u.contains(id)) {
                  del.add(r.getLong(1));
                }
              }
              long[] d = del.stream().mapToLong(Long::longValue).toArray();
              return List.of(new ViewPart(RowIdSet.serialize(ids), d)).iterator();
            }).collect();
      } finally {
        src.destroy();
        upd.destroy();
      }
      for (ViewPart p : parts) {
        inView.or(RowIdSet.deserialize(p.ids));
        for (long a : p.deletes) {
          deletes.add(a);
        }
      }
    }

    /**
     * Writes the projected rows {@code task} selects; nothing is committed.
     *
     * @param packTasks 0: one task per input partition; otherwise the input partitions are
     *     coalesced into {@code max(packTasks, min(partitions, defaultParallelism))} tasks. A
     *     coalesce without shuffle runs the whole upstream plan (source read, the SELECT's
     *     expressions and UDFs) in those tasks, so packing never goes below what the cluster
     *     can run at once. An explicit {@code concurrency} option overrides both.
     */
    private Written write(Dataset<Row> projected, Schema plain, WriteTask task, int packTasks) {
      Dataset<Row> in = projected;
      if (task.onlyIds != null) {
        // Pushed down to Lance, which then skips the data of other rows; the tasks still check
        // the broadcast set when there are too many runs to push.
        List<long[]> runs = RowIdSet.runs(task.onlyIds, MAX_PUSHED_RUNS);
        if (runs != null) {
          in = in.where(runPredicate(runs, 0, runs.size()));
        }
      }
      long planning = System.currentTimeMillis();
      JavaRDD<InternalRow> rdd = in.queryExecution().toRdd().toJavaRDD();
      int parts = rdd.getNumPartitions();
      int limit = o.concurrency() != null ? o.concurrency()
          : packTasks == 0 ? 0
          : Math.max(packTasks, Math.min(parts, spark.sparkContext().defaultParallelism()));
      if (limit > 0 && parts > limit) {
        rdd = rdd.coalesce(limit);
      }
      ctx.observe(RefreshListener.Probe.WRITE_TASKS, rdd.getNumPartitions());
      task.reportingTo(ctx.listener());
      planning = System.currentTimeMillis() - planning;
      describe("write " + (task.onlyIds == null ? "new" : String.valueOf(
          task.onlyIds.getLongCardinality())) + " rows in " + rdd.getNumPartitions() + " tasks");
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      List<Broadcast<byte[]>> broadcasts = task.broadcast(jsc);
      List<TaskOutput> outs;
      try {
        outs = rdd.mapPartitions(task).collect();
      } catch (Exception e) {
        // SparkException is checked to javac but thrown by Scala code all the same.
        throw failedTask(e);
      } finally {
        broadcasts.forEach(Broadcast::destroy);
      }
      List<FragmentMetadata> out = new ArrayList<>();
      List<FragmentSourceRanges.Range> ranges = new ArrayList<>();
      Roaring64NavigableMap kept = Roaring64NavigableMap.bitmapOf();
      long rows = 0;
      for (TaskOutput o : outs) {
        List<FragmentMetadata> fs = FragmentShipping.fromBytes(o.fragments);
        out.addAll(fs);
        for (int i = 0; i < fs.size(); i++) {
          ranges.add(o.ranges == null || o.ranges.size() != fs.size() ? null : o.ranges.get(i));
        }
        rows += o.rows;
        if (o.kept != null) {
          kept.or(RowIdSet.deserialize(o.kept));
        }
      }
      LOG.info("View {} (job {}): {} tasks wrote {} rows in {} fragments (not committed yet); "
          + "planning {} ms", t.viewName(), jobId, outs.size(), rows, out.size(), planning);
      return new Written(out, rows, kept, ranges);
    }

    private RuntimeException failedTask(Exception e) {
      for (Throwable c = e; c != null; c = c.getCause()) {
        if (c instanceof MaterializedViewException m) {
          return m;
        }
      }
      return new QueryRefreshException("Refresh of view " + t.viewName() + " (job " + jobId
          + ") failed in a Spark task; nothing was committed, the view is unchanged: "
          + e.getMessage(), e);
    }
  }

  private static Column runPredicate(List<long[]> runs, int from, int to) {
    if (to - from == 1) {
      long[] r = runs.get(from);
      Column c = functions.col(GenevaLayout.SOURCE_ROW_ID);
      return r[0] == r[1] ? c.equalTo(r[0]) : c.between(r[0], r[1]);
    }
    int mid = (from + to) >>> 1;
    return runPredicate(runs, from, mid).or(runPredicate(runs, mid, to));
  }

  /** When the dataset's current version was written, as an ISO-8601 instant. */
  static String versionTime(org.lance.Dataset ds) {
    return SourceIdentity.versionTime(ds);
  }

  static Schema withoutMetadata(Schema s) {
    List<Field> fields = new ArrayList<>();
    for (Field f : s.getFields()) {
      fields.add(new Field(f.getName(), new FieldType(f.isNullable(), f.getType(),
          f.getDictionary()), f.getChildren()));
    }
    return new Schema(fields);
  }

  static org.lance.Dataset open(BufferAllocator a, String uri, Map<String, String> storage,
      Long version, String what) {
    ReadOptions.Builder ro = CredentialRefresh.readOptions(storage);
    if (version != null) {
      ro.setVersion(version);
    }
    try {
      return org.lance.Dataset.open(a, uri, ro.build());
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Cannot open the " + what + " at '" + uri + "'"
          + (version == null ? "" : " version " + version) + ": " + e.getMessage(), e);
    }
  }

  /** What one view-scan task found. */
  record ViewPart(byte[] ids, long[] deletes) implements Serializable {}

  /**
   * What one write task wrote: serialised fragment metadata, row count, the source row ids it
   * found already in the view and unchanged (serialised set; {@code null} when not asked), and
   * each fragment's source row id range ({@link FragmentShipping.Written#ranges}).
   */
  record TaskOutput(byte[] fragments, long rows, byte[] kept,
      List<FragmentSourceRanges.Range> ranges)
      implements Serializable {}

  /**
   * What the write tasks of a refresh wrote, together; {@code ranges} has the source row id
   * range of each fragment ({@code null} entries when unknown).
   */
  record Written(List<FragmentMetadata> fragments, long rows, Roaring64NavigableMap kept,
      List<FragmentSourceRanges.Range> ranges) {}

  /**
   * Executor side: streams a partition's projected rows into new view fragments. Rows are
   * {@code [__source_row_id, __is_set, projection...]}, plus {@code
   * _row_last_updated_at_version} after them when unchanged view rows are to be kept.
   */
  static final class WriteTask implements FlatMapFunction<Iterator<InternalRow>, TaskOutput> {
    private static final long serialVersionUID = 1L;
    private final String viewUri;
    private final HashMap<String, String> storage;
    private final String schemaJson;
    private final int maxRowsPerFile;
    /** Driver side only: the ids to write, or {@code null} for every row. */
    final transient Roaring64NavigableMap onlyIds;
    private final transient Roaring64NavigableMap inViewIds;
    private final long watermark;
    private final int updatedAtColumn;
    private Broadcast<byte[]> only;
    private Broadcast<byte[]> inView;
    private RefreshListener listener = RefreshListener.NONE;

    private WriteTask(ViewTables t, Schema plain, RefreshOptions o, Roaring64NavigableMap onlyIds,
        Roaring64NavigableMap inViewIds, long watermark, int updatedAtColumn) {
      this.viewUri = t.viewUri();
      this.storage = new HashMap<>(t.viewStorageOptions());
      this.schemaJson = plain.toJson();
      this.maxRowsPerFile = o.maxRowsPerFragment() == null ? 0 : o.maxRowsPerFragment();
      this.onlyIds = onlyIds;
      this.inViewIds = inViewIds;
      this.watermark = watermark;
      this.updatedAtColumn = updatedAtColumn;
    }

    /** Writes every row. */
    static WriteTask every(ViewTables t, Schema plain, RefreshOptions o) {
      return new WriteTask(t, plain, o, null, null, 0, -1);
    }

    /** Writes the rows whose source row id is in {@code ids}. */
    static WriteTask only(ViewTables t, Schema plain, RefreshOptions o, Roaring64NavigableMap ids) {
      return new WriteTask(t, plain, o, ids, null, 0, -1);
    }

    /**
     * Writes every row except those already in the view ({@code inView}) and not updated after
     * {@code watermark} (column {@code updatedAtColumn}); reports those as kept.
     */
    static WriteTask keeping(ViewTables t, Schema plain, RefreshOptions o,
        Roaring64NavigableMap inView, long watermark, int updatedAtColumn) {
      return new WriteTask(t, plain, o, null, inView, watermark, updatedAtColumn);
    }

    /**
     * The keeping rule of {@link #keeping}: {@code r} ({@code __source_row_id} first, the update
     * version in column {@code col}) is in the view and known not to have changed since the
     * watermark. NULL (version unknown) counts as changed and is re-projected: that only costs
     * rows of changed fragments, and is the same choice as the full scan's sourceState.
     */
    static boolean unchangedInView(Roaring64NavigableMap view, long watermark, InternalRow r,
        int col) {
      return view.contains(r.getLong(0)) && !r.isNullAt(col) && r.getLong(col) <= watermark;
    }

    /**
     * The listener the tasks call after each batch, shipped with the task only when it listens
     * to batches: one that only observes on the driver need not be serializable.
     */
    void reportingTo(RefreshListener l) {
      this.listener = listensToBatches(l) ? l : RefreshListener.NONE;
    }

    private static boolean listensToBatches(RefreshListener l) {
      try {
        return l.getClass().getMethod("afterTaskBatch", int.class).getDeclaringClass()
            != RefreshListener.class;
      } catch (NoSuchMethodException e) {
        return true;
      }
    }

    /** Ships the id sets to the executors; the caller destroys the broadcasts. */
    List<Broadcast<byte[]>> broadcast(JavaSparkContext jsc) {
      List<Broadcast<byte[]>> out = new ArrayList<>();
      if (onlyIds != null) {
        only = jsc.broadcast(RowIdSet.serialize(onlyIds));
        out.add(only);
      }
      if (inViewIds != null) {
        inView = jsc.broadcast(RowIdSet.serialize(inViewIds));
        out.add(inView);
      }
      return out;
    }

    @Override
    public Iterator<TaskOutput> call(Iterator<InternalRow> rows) throws Exception {
      Schema schema = Schema.fromJSON(schemaJson);
      TaskContext tc = TaskContext.get();
      Iterator<InternalRow> in = rows;
      if (only != null) {
        in = new FilteringIterator(rows, RowIdSet.deserialize(only.value()));
      }
      Roaring64NavigableMap kept = null;
      if (inView != null) {
        Roaring64NavigableMap view = RowIdSet.deserialize(inView.value());
        Roaring64NavigableMap k = Roaring64NavigableMap.bitmapOf();
        kept = k;
        int col = updatedAtColumn;
        long mark = watermark;
        in = new FilteringIterator(rows, r -> {
          if (unchangedInView(view, mark, r, col)) {
            k.addLong(r.getLong(0));
            return false;
          }
          return true;
        });
      }
      int partition = tc == null ? -1 : tc.partitionId();
      RefreshListener hook = listener;
      long started = System.nanoTime();
      try (BufferAllocator a = new RootAllocator()) {
        boolean any = in.hasNext();
        long firstRow = System.nanoTime();
        // column 0 is __source_row_id: its range per fragment lets later refreshes skip it
        FragmentShipping.Written w = FragmentShipping.writeRows(viewUri, storage, a, schema, in,
            maxRowsPerFile, () -> hook.afterTaskBatch(partition), 0);
        LOG.debug("Write task {}: first row after {} ms ({}), {} rows written in {} ms", partition,
            (firstRow - started) / 1_000_000, any, w.rows(),
            (System.nanoTime() - firstRow) / 1_000_000);
        // kept was filled by the filter as writeRows pulled the rows, on this thread.
        return List.of(new TaskOutput(FragmentShipping.toBytes(w.fragments()), w.rows(),
            kept == null ? null : RowIdSet.serialize(kept), new ArrayList<>(w.ranges())))
            .iterator();
      }
    }
  }

  /** Rows whose {@code __source_row_id} (column 0) is in the set. */
  private static final class FilteringIterator implements Iterator<InternalRow> {
    private final Iterator<InternalRow> rows;
    private final java.util.function.Predicate<InternalRow> keep;
    private InternalRow next;

    FilteringIterator(Iterator<InternalRow> rows, Roaring64NavigableMap ids) {
      this(rows, r -> ids.contains(r.getLong(0)));
    }

    FilteringIterator(Iterator<InternalRow> rows, java.util.function.Predicate<InternalRow> keep) {
      this.rows = rows;
      this.keep = keep;
    }

    @Override
    public boolean hasNext() {
      while (next == null && rows.hasNext()) {
        InternalRow r = rows.next();
        if (keep.test(r)) {
          next = r;
        }
      }
      return next != null;
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      InternalRow r = next;
      next = null;
      return r;
    }
  }
}
