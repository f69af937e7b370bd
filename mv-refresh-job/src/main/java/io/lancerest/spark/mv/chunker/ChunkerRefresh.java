package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.mv.ErrorsTable;
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
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import io.lancerest.spark.mv.rowindex.SourceIdIndexCache;
import io.lancerest.spark.mv.rowindex.SourceIdIndexFiles;
import io.lancerest.spark.mv.rowindex.ViewRowLookup;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.RefreshDriver;
import io.lancerest.spark.mv.refresh.SourceVersions;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructType;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Incremental refresh of a chunker view, as one atomic commit.
 *
 * <p>State kept on the view table, changed only by the refresh's single commit: the watermark
 * (field metadata {@value #WATERMARK_KEY} on {@code __source_row_id}, as Geneva stores it, plus
 * schema metadata {@value #BASE_TABLE_VERSION_KEY}) and the set of <em>processed parents</em>
 * (config {@value #PROCESSED_KEY}: a portable 64-bit roaring bitmap, base64) — every source row
 * id that was expanded, including those that yielded no children, which is why those are never
 * re-run. Row ids and the watermark mean something only for the table they came from, so the
 * commit also records when that source version was written ({@link SourceIdentity}); a source
 * dropped and created again under the same name is refused before anything is read.
 *
 * <p>A refresh to source version {@code v}:
 * <ol>
 *   <li>scans the filtered source at {@code v} for row ids {@code S} and the ids updated after the
 *       watermark {@code U} ({@code _row_last_updated_at_version > watermark});
 *   <li>deletes the children of processed parents that are gone ({@code P - S}: deleted, or no
 *       longer matching the filter) or changed in place ({@code P ∩ U});
 *   <li>expands new ({@code S - P}) and changed parents in Spark tasks that write fragments;
 *   <li>commits deletions, new fragments, watermark and processed set in one {@link ViewCommit}.
 * </ol>
 * lance-spark's UPDATE gives an updated row a new row id: the old id is then gone and the new
 * one new, which the same rules handle. A failure anywhere before the commit leaves the view as
 * it was; the data files written so far are never referenced.
 */
public final class ChunkerRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkerRefresh.class);

  /** Field metadata on {@code __source_row_id}: the source version the view reflects. */
  public static final String WATERMARK_KEY = GenevaLayout.WATERMARK;
  /** Schema metadata: the same version, under Geneva's view key. */
  public static final String BASE_TABLE_VERSION_KEY = GenevaLayout.BASE_TABLE_VERSION;
  /** Config: source row ids already expanded (roaring bitmap, base64). */
  public static final String PROCESSED_KEY = "lancerest::view::chunker::processed_parents";
  /** Config: parents cut by {@code output_limit}; re-expanded by every refresh. */
  public static final String TRUNCATED_KEY = "lancerest::view::chunker::truncated_parents";
  /**
   * Config: filtered source rows at the watermark that are not processed (skipped or cut by
   * {@code output_limit}). When it is 0 the next refresh scans only the source fragments that
   * changed since the watermark; see {@link SourceState}.
   */
  public static final String UNPROCESSED_KEY = "lancerest::view::chunker::unprocessed_parents";
  /** Where views refreshed before the keys moved to {@code lancerest::view::} keep them. */
  static final Map<String, String> LEGACY_KEYS = Map.of(
      PROCESSED_KEY, "lancerest.mv.chunker.processed_parents",
      TRUNCATED_KEY, "lancerest.mv.chunker.truncated_parents",
      UNPROCESSED_KEY, "lancerest.mv.chunker.unprocessed_parents");

  /** The legacy names present in {@code config}. */
  static java.util.Set<String> legacyKeysIn(Map<String, String> config) {
    java.util.Set<String> present = new java.util.HashSet<>(LEGACY_KEYS.values());
    present.retainAll(config.keySet());
    return present;
  }

  /** {@code key} of the view's config, or its legacy name's value. */
  static String configValue(Map<String, String> config, String key) {
    String v = config.get(key);
    return v != null ? v : config.get(LEGACY_KEYS.get(key));
  }
  /** More rowid ranges than this and the task filters by bitmap instead of pushing them down. */
  private static final int MAX_PUSHED_RANGES = 256;

  private ChunkerRefresh() {}

  /** The view table's columns for this definition over this source DataFrame. */
  public static Schema viewSchema(Dataset<Row> source, ChunkerDefinition def) {
    return layout(source, def).viewSchema();
  }

  /** Refreshes the view in {@code ctx}: its job id, listener, caches and job record. */
  static ChunkerRefreshResult run(RefreshContext ctx, ViewTables t, ChunkerDefinition def,
      RefreshOptions options) {
    options.checkApplicableTo(MaterializedViewKind.CHUNKER);
    return RefreshDriver.refresh(ctx, t, options.srcVersion(), options.maxRowsPerFragment(),
        () -> SourceVersions.latest(
        t.viewName(), t.sourceUri(), t.sourceStorageOptions()), kind(t, def, options));
  }

  /** What {@link #run} would do now, with nothing expanded, written or committed. */
  public static RefreshPlan explain(SparkSession spark, ViewTables t, ChunkerDefinition def,
      RefreshOptions options) {
    options.checkApplicableTo(MaterializedViewKind.CHUNKER);
    RefreshContext ctx = new RefreshContext(spark, t.viewName(), "explain", null);
    return RefreshDriver.explain(ctx, options.srcVersion(), () -> SourceVersions.latest(
        t.viewName(), t.sourceUri(), t.sourceStorageOptions()), kind(t, def, options));
  }

  /** Chunker views in {@link RefreshDriver}'s sequence: one {@link Run} per attempt. */
  private static ViewRefresh<ChunkerRefreshResult> kind(ViewTables t, ChunkerDefinition def,
      RefreshOptions o) {
    return ViewRefresh.of(MaterializedViewKind.CHUNKER, r -> new ViewRefresh.Outcome(r.status(),
        r.sourceVersion(), r.rowsInserted(), r.rowsDeleted(), r.skipped().size()),
        (ctx, srcVersion) -> new Run(ctx, t, def, o).prepare(srcVersion));
  }

  static Dataset<Row> read(SparkSession spark, ViewTables t, Long version) {
    // Bound to lance-spark's path catalog: a session catalog named "lance" would capture it.
    return io.lancerest.spark.mv.LanceReads.load(spark, t.sourceUri(),
        t.sourceStorageOptions(), version);
  }

  /** {@code [__source_row_id, projected...]} of the filtered source. */
  static Dataset<Row> project(Dataset<Row> source, ChunkerDefinition def) {
    Dataset<Row> filtered = def.filter() == null ? source : source.where(def.filter());
    List<Column> cols = new ArrayList<>();
    cols.add(functions.col("_rowid").as(ChunkerLayout.SOURCE_ROW_ID));
    if (def.projection().isEmpty()) {
      for (String c : source.columns()) {
        cols.add(functions.col(c));
      }
    } else {
      for (SourceQuery.OutputColumn c : def.projection()) {
        cols.add(functions.expr(c.expr()).as(c.name()));
      }
    }
    return filtered.select(cols.toArray(new Column[0]));
  }

  static ChunkerLayout layout(Dataset<Row> source, ChunkerDefinition def) {
    StructType full = project(source, def).schema();
    StructType projected = new StructType(java.util.Arrays.copyOfRange(full.fields(), 1,
        full.fields().length));
    return ChunkerLayout.of(projected, def.function().inputColumns(),
        def.function().outputSchema(), def.inheritInputColumns());
  }

  /** One refresh. */
  private static final class Run {
    final RefreshContext ctx;
    final SparkSession spark;
    final ViewTables t;
    final ChunkerDefinition def;
    final RefreshOptions o;
    final String jobId;
    final ChunkerTask.Settings settings;

    Run(RefreshContext ctx, ViewTables t, ChunkerDefinition def, RefreshOptions o) {
      this.ctx = ctx;
      this.spark = ctx.spark();
      this.t = t;
      this.def = def;
      this.o = o;
      this.jobId = ctx.jobId();
      this.settings = ChunkerTask.Settings.of(o, spark);
    }

    /** What a refresh reads and decides before it expands anything (REFRESH and EXPLAIN). */
    private final class Prepared implements ViewRefresh.Attempt<ChunkerRefreshResult> {
      long readVersion;
      Schema viewTable;
      long viewRows;
      long watermark;
      long srcVersion;
      String srcVersionTime;
      Roaring64NavigableMap processed;
      Roaring64NavigableMap truncated;
      Dataset<Row> source;
      ChunkerLayout layout;
      SourceState state;
      Roaring64NavigableMap deleteParents;
      Map<String, String> config;
      long scanMillis;
      /**
       * Why every parent is expanded again although nothing forces it: a cleanup removed the
       * watermark version of the source ({@link SourceVersions#removedByCleanup}), or {@code
       * null}.
       */
      String watermarkRemoved;

      /** Whether every parent is expanded again and every view row replaced. */
      boolean rebuild() {
        return o.force() || watermarkRemoved != null;
      }

      @Override
      public boolean upToDate() {
        return !rebuild() && state.toExpand.isEmpty() && deleteParents.isEmpty()
            && srcVersion == watermark && o.outputLimit() == null;
      }

      @Override
      public ChunkerRefreshResult skipped() {
        return new ChunkerRefreshResult(RefreshResult.JobStatus.SKIPPED, srcVersion, watermark,
            readVersion, 0, 0, 0, 0, 0, 0, List.of(), ctx.elapsedMillis());
      }

      @Override
      public RefreshPlan explain() {
        return Run.this.explain(this);
      }

      @Override
      public StagedRefresh<ChunkerRefreshResult> compute() {
        return Run.this.compute(this);
      }
    }

    Prepared prepare(long requestedVersion) {
      ChunkerFunctions.check(def.function().className(), def.function().batch());
      Prepared p = new Prepared();
      // 1. the view's state at the version this refresh reads (and will commit on top of)
      long readVersion;
      Schema viewTable;
      Map<String, String> config;
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset view = openView(a, null)) {
        readVersion = view.version();
        viewTable = view.getSchema();
        config = view.getConfig();
        p.viewRows = view.countRows();
      }
      long watermark = watermark(viewTable);
      long srcVersion = sourceVersion(watermark, viewTable.getCustomMetadata(),
          requestedVersion);
      if (watermark > 0 && srcVersion != watermark && !o.force()) {
        // Without that version the parents updated in place since cannot be told from those a
        // compaction moved (SourceHistory), so the processed set cannot be trusted.
        p.watermarkRemoved = SourceVersions.removedByCleanup(t.viewName(), t.sourceUri(),
            t.sourceStorageOptions(), watermark);
      }
      // force (or a rebuild): nothing counts as processed, so every filtered parent is expanded
      // again, and the commit replaces every view row (including those of truncated or gone
      // parents).
      boolean force = p.rebuild();
      Roaring64NavigableMap processed = force ? ParentIds.empty()
          : ParentIds.fromBase64(configValue(config, PROCESSED_KEY), "processed parent set");
      Roaring64NavigableMap truncated = force ? ParentIds.empty()
          : ParentIds.fromBase64(configValue(config, TRUNCATED_KEY), "truncated parent set");
      // Recorded by the commit so the next refresh can tell this source from a table created
      // later under the same name (SourceIdentity).
      String srcVersionTime = SourceIdentity.versionTime(t.sourceUri(), t.sourceStorageOptions(),
          srcVersion);
      if (srcVersionTime == null) {
        throw new ChunkerRefreshException("Cannot open the source of view '" + t.viewName()
            + "' at '" + t.sourceUri() + "' version " + srcVersion);
      }

      Dataset<Row> source = read(spark, t, srcVersion);
      ChunkerLayout layout = layout(source, def);
      layout.checkMatches(viewTable, t.viewName());

      // 2. which parents exist now, and which changed since the watermark
      long t0 = System.nanoTime();
      boolean mayScope = !force && o.outputLimit() == null && truncated.isEmpty()
          && "0".equals(configValue(config, UNPROCESSED_KEY));
      SourceState state = SourceState.scan(new SourceState.Source(ctx, t, def.filter(), source),
          watermark, srcVersion, processed,
          mayScope && ctx.listener().readChangedFragmentsOnly());
      Roaring64NavigableMap gone = state.gone;
      Roaring64NavigableMap changed = state.changed;
      Roaring64NavigableMap toExpand = state.toExpand;
      Roaring64NavigableMap deleteParents = ParentIds.or(ParentIds.or(gone, changed), truncated);
      long scanned = System.nanoTime();
      LOG.info("Chunker view {} (job {}): source version {} (watermark {}), scanned {}: {} "
          + "parents, {} to expand ({} changed), {} removed", t.viewName(), jobId, srcVersion,
          watermark, state.scope, state.present.getLongCardinality(),
          toExpand.getLongCardinality(), changed.getLongCardinality(),
          gone.getLongCardinality());
      p.readVersion = readVersion;
      p.viewTable = viewTable;
      p.watermark = watermark;
      p.srcVersion = srcVersion;
      p.srcVersionTime = srcVersionTime;
      p.processed = processed;
      p.truncated = truncated;
      p.source = source;
      p.layout = layout;
      p.state = state;
      p.deleteParents = deleteParents;
      p.config = config;
      p.scanMillis = ms(t0, scanned);
      return p;
    }

    /** The reason of a rebuild when the watermark version is gone, for the log and EXPLAIN. */
    private String watermarkRemovedReason(Prepared p) {
      return p.watermarkRemoved + "; which parents changed since then cannot be told, so every "
          + "parent is expanded again from source version " + p.srcVersion;
    }

    /** What {@link #execute} would do, with nothing expanded, written or committed. */
    RefreshPlan explain(Prepared p) {
      Long from = p.watermark == 0 ? null : p.watermark;
      SourceState st = p.state;
      if (p.upToDate()) {
        return new RefreshPlan(t.viewName(), MaterializedViewKind.CHUNKER,
            RefreshPlan.Mode.NO_OP, "the view already reflects source version " + p.srcVersion,
            from, p.srcVersion, st.fragmentsNow, List.of(), 0, p.viewRows, 0L, 0L,
            RefreshPlan.Write.NONE, null, "");
      }
      long toExpand = st.toExpand.getLongCardinality();
      Long deletes = p.rebuild() ? p.viewRows
          : (long) scanView(p.readVersion, p.deleteParents, false).deleteAddresses.size();
      String reason = o.force() ? "force = true: every parent is expanded again"
          : p.watermarkRemoved != null ? watermarkRemovedReason(p)
          : o.outputLimit() != null ? "output_limit: every source fragment is read"
          : !p.truncated.isEmpty() ? "parents cut off by an earlier output_limit: every source "
              + "fragment is read"
          : st.wholeSource ? "every source fragment is read (" + st.scope + ")"
          : "source changed since version " + p.watermark + ": " + st.scope;
      reason += "; " + toExpand + " parents to expand (" + st.changed.getLongCardinality()
          + " changed), " + st.gone.getLongCardinality() + " removed";
      long items = Math.max(1, (toExpand + settings.sourceTaskSize() - 1) / settings.sourceTaskSize());
      // as expand() does: the read of the whole source has one input partition per fragment
      int target = o.concurrency() != null ? o.concurrency()
          : Math.max(st.fragmentsNow, spark.sparkContext().defaultParallelism());
      int tasks = (int) Math.max(1, Math.min(target, items));
      boolean everyParent = st.wholeSource && st.present.equals(st.toExpand);
      String onDriver = everyParent || st.fragments == null ? "every source fragment is read"
          : LocalExpansion.declines(spark, ctx, toExpand);
      RefreshPlan.Write where = toExpand == 0 ? RefreshPlan.Write.NONE
          : onDriver == null ? RefreshPlan.Write.DRIVER : RefreshPlan.Write.SPARK_JOB;
      String note = toExpand == 0 ? ""
          : "the children written are known only by running the chunker on the " + toExpand
          + " parents" + (o.outputLimit() == null ? ""
          : "; output_limit " + o.outputLimit() + " then caps the view's rows")
          + (where != RefreshPlan.Write.DRIVER ? "" : "; a Spark job of " + tasks + " tasks "
          + "expands them instead if the definition cannot run on the driver, the parents "
          + "exceed " + LocalExpansion.MAX_BYTES_CONF + " or the chunker takes longer than "
          + LocalExpansion.MAX_MILLIS_CONF);
      return new RefreshPlan(t.viewName(), MaterializedViewKind.CHUNKER,
          p.rebuild() ? RefreshPlan.Mode.FULL : RefreshPlan.Mode.INCREMENTAL, reason, from,
          p.srcVersion, st.fragmentsNow, st.fragments, st.rowsScanned, p.viewRows, deletes,
          null, where, where == RefreshPlan.Write.SPARK_JOB ? tasks : null, note);
    }

    StagedRefresh<ChunkerRefreshResult> compute(Prepared p) {
      long readVersion = p.readVersion;
      Schema viewTable = p.viewTable;
      long watermark = p.watermark;
      long srcVersion = p.srcVersion;
      String srcVersionTime = p.srcVersionTime;
      Roaring64NavigableMap processed = p.processed;
      Dataset<Row> source = p.source;
      ChunkerLayout layout = p.layout;
      SourceState state = p.state;
      Roaring64NavigableMap gone = state.gone;
      Roaring64NavigableMap changed = state.changed;
      Roaring64NavigableMap toExpand = state.toExpand;
      Roaring64NavigableMap deleteParents = p.deleteParents;
      boolean force = p.rebuild();
      if (p.watermarkRemoved != null) {
        LOG.warn("Chunker view {} (job {}): {}", t.viewName(), jobId, watermarkRemovedReason(p));
      }
      long t0 = System.nanoTime() - p.scanMillis * 1_000_000;
      long scanned = System.nanoTime();

      // 3. expansion on executors
      boolean everyParent = state.wholeSource && state.present.equals(toExpand);
      // Only the fragments the change set names hold parents to expand: read just those.
      Dataset<Row> expandFrom = state.fragments == null ? source
          : FragmentScopedRead.restrict(source, new java.util.HashSet<>(state.fragments));
      Expansion ex = toExpand.isEmpty() ? new Expansion()
          : everyParent || state.fragments == null
              ? expand(expandFrom, layout, viewTable, toExpand, everyParent, null)
              : expandChanged(expandFrom, state.fragments, srcVersion, layout, viewTable,
                  toExpand);
      def.errorHandling().checkSkips(ex.skipped.size(), toExpand.getLongCardinality(),
          "parents");
      long expanded = System.nanoTime();

      // 4. rows to delete, and the output_limit cut
      ViewRows existing = force ? new ViewRows()
          : scanView(readVersion, deleteParents, o.outputLimit() != null);
      Roaring64NavigableMap newTruncated = ParentIds.empty();
      if (o.outputLimit() != null) {
        ex = applyLimit(ex, existing, source, layout, viewTable, toExpand, newTruncated);
      }

      // 5. the new processed set; skipped and truncated parents stay unprocessed
      Roaring64NavigableMap nextProcessed = ParentIds.minus(processed, deleteParents);
      for (long sid : ex.counts.keySet()) {
        nextProcessed.addLong(sid);
      }
      nextProcessed.andNot(newTruncated);
      // Filtered parents of the scanned fragments left unprocessed (skipped or truncated); the
      // fragments not scanned have none (they were skipped only when the last refresh left none).
      long unprocessed = ParentIds.minus(state.present, nextProcessed).getLongCardinality();
      long viewScanned = System.nanoTime();

      ViewCommit.Builder commitBuilder = ViewCommit.builder(t.viewUri(), readVersion)
          .storageOptions(t.viewStorageOptions())
          .deleteRowAddresses(existing.deleteAddresses)
          .addFragments(ex.fragments, ex.ranges.size() == ex.fragments.size() ? ex.ranges
              : null)
          .fieldMetadata(ChunkerLayout.SOURCE_ROW_ID,
              Map.of(WATERMARK_KEY, String.valueOf(srcVersion)))
          .schemaMetadata(Map.of(BASE_TABLE_VERSION_KEY, String.valueOf(srcVersion),
              SourceIdentity.KEY, srcVersionTime))
          .config(Map.of(PROCESSED_KEY, ParentIds.toBase64(nextProcessed),
              TRUNCATED_KEY, ParentIds.toBase64(newTruncated),
              UNPROCESSED_KEY, String.valueOf(unprocessed)))
          .job(new ViewCommit.Job(jobId, MaterializedViewKind.CHUNKER, ex.skipped.isEmpty()
              ? RefreshResult.JobStatus.DONE : RefreshResult.JobStatus.PARTIAL, srcVersion));
      if (force) {
        commitBuilder.replaceAllRows();
      }
      ViewCommit commit = commitBuilder.build();
      // Skipped parents are written before the commit and appended after it (ErrorsTable).
      ErrorsTable.Staged errors = ChunkerErrorsTable.stage(t.errorsTableUri(),
          t.viewStorageOptions(), jobId, t.viewName(), def.function(), srcVersion, ex.skipped);
      Expansion done = ex;
      return new StagedRefresh<>(commit, errors, r -> {
        long zero = done.counts.values().stream().filter(c -> c == 0).count();
        ChunkerRefreshResult result = new ChunkerRefreshResult(done.skipped.isEmpty()
            ? RefreshResult.JobStatus.DONE : RefreshResult.JobStatus.PARTIAL, srcVersion,
            watermark, r.version(), done.counts.size() + done.skipped.size(), zero,
            gone.getLongCardinality(), r.rowsAdded(), r.rowsDeleted(), r.fragmentsAdded(),
            done.skipped, ctx.elapsedMillis());
        LOG.info("Chunker view {} (job {}): {}; source scan {} ms, expansion {} ms, view scan "
            + "{} ms ({}), commit {} ms", t.viewName(), jobId, result, ms(t0, scanned),
            ms(scanned, expanded), ms(expanded, viewScanned), existing.found,
            ms(viewScanned, System.nanoTime()));
        return result;
      }, legacyKeysIn(p.config).isEmpty() ? null : () -> dropLegacyKeys(p.config));
    }

    /**
     * Removes the state under its old names once the new ones are committed, so that an older
     * engine never reads a stale processed set (one more, metadata-only view commit, once).
     */
    private void dropLegacyKeys(Map<String, String> config) {
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset view = openView(a, null)) {
        view.deleteConfigKeys(legacyKeysIn(config));
      }
    }

    private org.lance.Dataset openView(BufferAllocator a, Long version) {
      ReadOptions.Builder ro = CredentialRefresh.readOptions(
          t.viewStorageOptions());
      if (version != null) {
        ro.setVersion(version);
      }
      try {
        return org.lance.Dataset.open(a, t.viewUri(), ro.build());
      } catch (RuntimeException e) {
        throw new ChunkerRefreshException("Cannot open the table of view '" + t.viewName()
            + "' at '" + t.viewUri() + "': " + e.getMessage(), e);
      }
    }

    private long watermark(Schema viewTable) {
      Field f = viewTable.findField(ChunkerLayout.SOURCE_ROW_ID);
      String w = f.getMetadata() == null ? null : f.getMetadata().get(WATERMARK_KEY);
      if (w == null || w.isBlank()) {
        return 0;
      }
      try {
        return Long.parseLong(w.trim());
      } catch (NumberFormatException e) {
        throw new ChunkerRefreshException("View '" + t.viewName() + "' has an unreadable "
            + "watermark '" + w + "' in " + WATERMARK_KEY);
      }
    }

    private long sourceVersion(long watermark, Map<String, String> viewMetadata,
        long requested) {
      long latest;
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset src = org.lance.Dataset.open(a, t.sourceUri(),
              CredentialRefresh.readOptions(t.sourceStorageOptions()).build())) {
        latest = src.latestVersion();
      } catch (RuntimeException e) {
        throw new ChunkerRefreshException("Cannot open the source of view '" + t.viewName()
            + "' at '" + t.sourceUri() + "': " + e.getMessage(), e);
      }
      // Before the version checks: a replaced source usually has fewer versions than the
      // watermark, and "cannot be refreshed backwards" would hide what happened.
      SourceIdentity.require(t.viewName(), t.sourceUri(), t.sourceStorageOptions(), viewMetadata,
          watermark, latest);
      SourceVersions.requireForward(t.viewName(), requested, watermark);
      return requested;
    }

    /**
     * Expands the parents {@code ids} of the changed {@code fragments}: on the driver when they
     * are few (no Spark job's fixed cost), else on executors; nothing is committed.
     */
    private Expansion expandChanged(Dataset<Row> scoped, List<Integer> fragments,
        long srcVersion, ChunkerLayout layout, Schema viewTable, Roaring64NavigableMap ids) {
      ctx.describe("expand " + ids.getLongCardinality() + " parents on the driver");
      LocalExpansion.Outcome local;
      try {
        local = LocalExpansion.tryExpand(ctx, t.sourceUri(), t.sourceStorageOptions(),
            srcVersion, project(scoped, def), fragments, ids, task(layout, viewTable, null, null));
      } finally {
        ctx.describe(null);
      }
      LOG.info("Chunker view {} (job {}): expansion on the {}: {}", t.viewName(), jobId,
          local.output() != null ? "driver" : "Spark path", local.why());
      if (local.output() != null) {
        ctx.observe(RefreshListener.Probe.WRITE_PATH, "driver");
        ctx.observe(RefreshListener.Probe.CHILD_ROWS_BUFFERED, local.output().maxBufferedRows);
        return Expansion.of(List.of(local.output()));
      }
      ctx.observe(RefreshListener.Probe.WRITE_PATH, "spark: " + local.why());
      return expand(scoped, layout, viewTable, ids, false, null);
    }

    /** The chunker a task runs; {@code expand}: the parents it keeps ({@code null}: all). */
    private ChunkerTask task(ChunkerLayout layout, Schema viewTable, Broadcast<byte[]> expand,
        Map<Long, Integer> caps) {
      Schema plain = new Schema(viewTable.getFields().stream().map(f -> new Field(f.getName(),
          new org.apache.arrow.vector.types.pojo.FieldType(f.isNullable(), f.getType(),
              f.getDictionary()), f.getChildren())).toList());
      return new ChunkerTask(t.viewName(), t.viewUri(), t.viewStorageOptions(), def.function(),
          def.errorHandling(), plain, layout.inputSchema(), plusOne(layout.inputPositions()),
          plusOne(layout.inheritedPositions()), settings, expand, caps);
    }

    /** Runs the chunker over {@code ids} on executors; nothing is committed. */
    private Expansion expand(Dataset<Row> source, ChunkerLayout layout, Schema viewTable,
        Roaring64NavigableMap ids, boolean everyParent, Map<Long, Integer> caps) {
      Dataset<Row> in = project(source, def);
      if (!everyParent) {
        // Pushed down to Lance (it skips the data of other rows); the tasks still filter by the
        // broadcast bitmap.
        List<long[]> ranges = ParentIds.ranges(ids, MAX_PUSHED_RANGES);
        if (ranges != null) {
          in = in.where(rangePredicate(ranges, 0, ranges.size()));
        } else if (ids.getLongCardinality() <= SourceState.MAX_ID_LITERALS) {
          in = in.where(SourceState.idsIn(ChunkerLayout.SOURCE_ROW_ID, ids));
        }
      }
      long parents = ids.getLongCardinality();
      long items = Math.max(1, (parents + settings.sourceTaskSize() - 1) / settings.sourceTaskSize());
      JavaRDD<Row> rdd = in.toJavaRDD();
      int partitions = rdd.getNumPartitions();
      int target = o.concurrency() != null ? o.concurrency()
          : Math.max(partitions, spark.sparkContext().defaultParallelism());
      target = (int) Math.max(1, Math.min(target, items));
      if (partitions > target) {
        rdd = rdd.coalesce(target);
      } else if (partitions < target) {
        // Few source fragments: spread the parents so that `target` tasks can run.
        rdd = rdd.repartition(target);
      }
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      Broadcast<byte[]> bc = jsc.broadcast(ParentIds.toBytes(ids));
      ChunkerTask task = task(layout, viewTable, bc, caps);
      ctx.describe("expand " + parents + " parents in " + items + " work items, "
          + rdd.getNumPartitions() + " tasks");
      List<TaskOutput> outs;
      try {
        outs = rdd.mapPartitions(task).collect();
      } catch (Exception e) {
        throw unwrap(e);
      } finally {
        bc.destroy();
      }
      ctx.observe(RefreshListener.Probe.CHILD_ROWS_BUFFERED, outs.stream()
          .mapToLong(out -> out.maxBufferedRows).max().orElse(0));
      return Expansion.of(outs);
    }

    private RuntimeException unwrap(Exception e) {
      for (Throwable c = e; c != null; c = c.getCause()) {
        if (c instanceof MaterializedViewException m) {
          return m;
        }
      }
      if (e instanceof RuntimeException re && !(e.getCause() instanceof SparkException)) {
        return re;
      }
      return new ChunkerRefreshException("Chunker refresh of view '" + t.viewName()
          + "' failed in a Spark task; the view is unchanged: " + e.getMessage(), e);
    }

    /** The output_limit cut: keep the first {@code limit} rows in (parent, child) order. */
    private Expansion applyLimit(Expansion ex, ViewRows existing, Dataset<Row> source,
        ChunkerLayout layout, Schema viewTable, Roaring64NavigableMap toExpand,
        Roaring64NavigableMap truncatedOut) {
      long limit = o.outputLimit();
      TreeMap<Long, Integer> perParent = new TreeMap<>(existing.keptCounts);
      ex.counts.forEach((sid, n) -> perParent.merge(sid, n, Integer::sum));
      long acc = 0;
      Long boundary = null;
      int keep = 0;
      for (Map.Entry<Long, Integer> e : perParent.entrySet()) {
        if (acc + e.getValue() <= limit) {
          acc += e.getValue();
          continue;
        }
        boundary = e.getKey();
        keep = (int) (limit - acc);
        break;
      }
      if (boundary == null) {
        return ex;
      }
      final long b = boundary;
      final int k = keep;
      // Existing rows past the cut go; their parents become truncated (re-expanded later).
      for (long[] row : existing.kept) {
        if (row[0] > b || (row[0] == b && row[1] >= k)) {
          existing.deleteAddresses.add(row[2]);
          truncatedOut.addLong(row[0]);
        }
      }
      boolean newRowsCut = false;
      for (Map.Entry<Long, Integer> e : ex.counts.entrySet()) {
        long sid = e.getKey();
        if (e.getValue() > 0 && (sid > b || (sid == b && e.getValue() > k))) {
          truncatedOut.addLong(sid);
          newRowsCut = true;
        }
      }
      if (!newRowsCut) {
        return ex;
      }
      // Some new children fall past the cut: write the new parents again, capped.
      Roaring64NavigableMap again = ParentIds.empty();
      for (long sid : ex.counts.keySet()) {
        if (sid < b || (sid == b && k > 0)) {
          again.addLong(sid);
        }
      }
      Expansion capped = again.isEmpty() ? new Expansion()
          : expand(source, layout, viewTable, again, false, Map.of(b, k));
      // the first expansion's fragments are never committed: their indexes go now
      SourceIdIndexFiles.drop(t.viewUri(), t.viewStorageOptions(), ex.fragments);
      Expansion out = new Expansion();
      out.fragments.addAll(capped.fragments);
      out.ranges.addAll(capped.ranges);
      out.counts.putAll(ex.counts);
      out.skipped.addAll(ex.skipped);
      return out;
    }

    /**
     * Addresses of rows to delete; with a limit, also the kept rows (sid, child, address). The
     * rows of {@code deleteParents} alone are found by the fragments' ranges and indexes
     * ({@link ViewRowLookup}); the kept rows of a view with an {@code output_limit} are all
     * read.
     */
    private ViewRows scanView(long version, Roaring64NavigableMap deleteParents,
        boolean keepRest) {
      ViewRows out = new ViewRows();
      if (deleteParents.isEmpty() && !keepRest) {
        return out;
      }
      if (!keepRest) {
        try (BufferAllocator a = new RootAllocator();
            org.lance.Dataset view = openView(a, version)) {
          io.lancerest.spark.mv.rowindex.ViewRows found = new ViewRowLookup(t.viewUri(),
              t.viewStorageOptions(), ctx.caches().get(SourceIdIndexCache.class,
              SourceIdIndexCache::new), ctx.deletionVectors()).find(view, a, deleteParents);
          ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_READ, found.lookedAt());
          ctx.observe(RefreshListener.Probe.VIEW_FRAGMENTS_SCANNED, found.scanned());
          for (int i = 0; i < found.size(); i++) {
            out.deleteAddresses.add(found.address(i));
          }
          out.found = found.describe();
          return out;
        } catch (ChunkerRefreshException e) {
          throw e;
        } catch (Exception e) {
          throw new ChunkerRefreshException("Cannot look up the rows to delete in view '"
              + t.viewName() + "' version " + version + ": " + e.getMessage(), e);
        }
      }
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset view = openView(a, version);
          LanceScanner s = view.newScan(new ScanOptions.Builder()
              .columns(List.of(ChunkerLayout.SOURCE_ROW_ID, ChunkerLayout.CHILD_INDEX))
              .withRowAddress(true).build());
          ArrowReader r = s.scanBatches()) {
        while (r.loadNextBatch()) {
          VectorSchemaRoot root = r.getVectorSchemaRoot();
          FieldVector sids = root.getVector(ChunkerLayout.SOURCE_ROW_ID);
          IntVector idx = (IntVector) root.getVector(ChunkerLayout.CHILD_INDEX);
          FieldVector addr = root.getVector("_rowaddr");
          for (int i = 0; i < root.getRowCount(); i++) {
            long sid = ((Number) sids.getObject(i)).longValue();
            long address = ((Number) addr.getObject(i)).longValue();
            if (deleteParents.contains(sid)) {
              out.deleteAddresses.add(address);
            } else {
              out.kept.add(new long[] {sid, idx.get(i), address});
              out.keptCounts.merge(sid, 1, Integer::sum);
            }
          }
        }
        out.found = "every view row read (output_limit)";
      } catch (ChunkerRefreshException e) {
        throw e;
      } catch (Exception e) {
        throw new ChunkerRefreshException("Cannot scan view '" + t.viewName() + "' version "
            + version + " for the rows to delete: " + e.getMessage(), e);
      }
      return out;
    }
  }

  private static long ms(long fromNanos, long toNanos) {
    return (toNanos - fromNanos) / 1_000_000;
  }

  private static int[] plusOne(int[] positions) {
    int[] out = new int[positions.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = positions[i] + 1;
    }
    return out;
  }

  private static Column rangePredicate(List<long[]> ranges, int from, int to) {
    if (to - from == 1) {
      long[] r = ranges.get(from);
      Column c = functions.col(ChunkerLayout.SOURCE_ROW_ID);
      return r[0] == r[1] ? c.equalTo(r[0]) : c.between(r[0], r[1]);
    }
    int mid = (from + to) >>> 1;
    return rangePredicate(ranges, from, mid).or(rangePredicate(ranges, mid, to));
  }

  /** Children written by the tasks, not committed yet. */
  private static final class Expansion {
    final List<FragmentMetadata> fragments = new ArrayList<>();
    /** Each fragment's source id range and whether it is indexed ({@code null}: unknown). */
    final List<FragmentSourceRanges.Range> ranges = new ArrayList<>();
    final Map<Long, Integer> counts = new HashMap<>();
    final List<ChunkerRefreshResult.SkippedParent> skipped = new ArrayList<>();

    /** What the tasks wrote, expanded and skipped, together. */
    static Expansion of(List<TaskOutput> outs) {
      Expansion ex = new Expansion();
      for (TaskOutput out : outs) {
        for (byte[] f : out.fragments) {
          ex.fragments.addAll(FragmentShipping.fromBytes(f));
        }
        ex.ranges.addAll(out.ranges);
        for (int i = 0; i < out.parentCount; i++) {
          ex.counts.put(out.parents[i], out.childCounts[i]);
        }
        ex.skipped.addAll(out.skipped);
      }
      return ex;
    }
  }

  /** What the driver read from the view at the read version. */
  private static final class ViewRows {
    /** How the rows were found, for the log. */
    String found = "no view row needed";
    final List<Long> deleteAddresses = new ArrayList<>();
    final List<long[]> kept = new ArrayList<>();
    final TreeMap<Long, Integer> keptCounts = new TreeMap<>();
  }
}
