package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.mv.ErrorsTable;
import io.lancerest.spark.mv.MaterializedViewException;
import io.lancerest.spark.mv.MaterializedViewKind;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.RefreshPlan;
import io.lancerest.spark.mv.RefreshResult;
import io.lancerest.spark.mv.SourceIdentity;
import io.lancerest.spark.mv.SourceQuery;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.RefreshDriver;
import io.lancerest.spark.mv.refresh.SourceVersions;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongFunction;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The refresh of a UDTF view: a full rebuild, partition-parallel on Spark, committed as ONE
 * atomic overwrite that carries the new rows and the new base version together.
 *
 * <ol>
 *   <li>If the view's recorded base version equals the source version, nothing is done ({@code
 *       SKIPPED}) unless forced. If the source's commits since that version only compacted it
 *       (rows and values unchanged, {@link SourceHistory#rowsUnchanged}) and the last refresh
 *       left no partition out, no partition is computed: one metadata commit records the new
 *       base version.</li>
 *   <li>The source query's rows are repartitioned by key over up to {@code concurrency} tasks
 *       and sorted within each task, so every task streams its partitions one after another
 *       (NULL keys form their own partition). An unpartitioned view is one task, one call.</li>
 *   <li>Each partition's output is written by its task as uncommitted fragments of the view and
 *       checkpointed, so a failed run's finished partitions are reused by the next run of the
 *       same UDTF name, version and source version.</li>
 *   <li>Failures follow the view's {@code error_handling} ({@link
 *       io.lancerest.spark.mv.ErrorHandling}) per partition: a failed refresh commits nothing;
 *       skipped partitions are recorded in the errors table ({@link ErrorsTable}: staged
 *       before the commit, appended after it) and the result is {@code PARTIAL}.</li>
 *   <li>The driver commits all fragments at once with {@link ViewCommit} (replace all rows,
 *       schema metadata with the base version), then drops the checkpoints.</li>
 * </ol>
 */
public final class UdtfRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(UdtfRefresh.class);
  /** Geneva's key for the source version a UDTF view was built from. */
  public static final String BASE_VERSION_KEY = "geneva::view::base_table_version";
  public static final String LAST_JOB_KEY = "lancerest::view::udtf::last_job_id";
  public static final String LAST_STATUS_KEY = "lancerest::view::udtf::last_status";
  public static final String SKIPPED_KEY = "lancerest::view::udtf::skipped_partitions";
  private static final AtomicBoolean RESOURCE_ADVISORY_LOGGED = new AtomicBoolean();
  /**
   * Tasks per task slot when {@code concurrency} is not given: more tasks than slots let a slot
   * that drew cheap partitions take another task while a costly one is still running.
   */
  static final int TASKS_PER_SLOT = 4;

  private UdtfRefresh() {}

  /**
   * The view's state a refresh starts from.
   *
   * @param complete whether the last refresh committed every partition ({@code DONE}, none
   *     skipped)
   */
  private record Start(long viewVersion, long viewRows, String base, String replaced,
      boolean complete) {
    boolean upToDate(RefreshOptions options, UdtfSource source) {
      return !options.force() && replaced == null && String.valueOf(source.version())
          .equals(base);
    }

    /** The recorded base version, or {@code null} (none, or unreadable). */
    Long baseVersion() {
      try {
        return base == null ? null : Long.parseLong(base.trim());
      } catch (NumberFormatException e) {
        return null;
      }
    }
  }

  /**
   * What a refresh that is not up to date learned about the source since the base version.
   *
   * @param removed a cleanup removed the base version ({@link SourceVersions#removedByCleanup})
   * @param unchanged the commits since changed no row (compactions, index and config commits):
   *     no partition needs computing ({@code null} when they did, or were not looked at)
   */
  private record Since(String removed, SourceHistory unchanged) {
    static final Since NOTHING = new Since(null, null);
  }

  /**
   * Whether the source's commits since the base version changed no row (compactions), and
   * whether that version is gone. The first only for a view the last refresh left complete (a
   * PARTIAL one is rebuilt to try its skipped partitions again), not partitioned by a vector
   * index (a compaction remaps the index, which decides the partitions), over a source with
   * stable row ids. It assumes, as the rest of the engine does, that a function's output does
   * not depend on the order its rows arrive in.
   */
  private static Since since(UdtfSource source, ViewTables view, UdtfDefinition def,
      RefreshOptions options, Start st) {
    Long base = st.baseVersion();
    if (options.force() || st.replaced != null || base == null || base >= source.version()) {
      return Since.NOTHING;
    }
    String removed = null;
    try {
      removed = SourceVersions.removedByCleanup(view.viewName(), source.location(),
          source.storageOptions(), base);
    } catch (MaterializedViewException e) {
      // A rebuild does not need that version: only the words of the plan and log lack it.
      LOG.debug("View '{}': {}", view.viewName(), e.getMessage());
    }
    if (!st.complete || def.partitionByIndexedColumn() != null) {
      return new Since(removed, null);
    }
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(a, source.location(),
            CredentialRefresh.readOptions(source.storageOptions())
                .setVersion(source.version()).build())) {
      // Without stable row ids a compaction renumbers the rows, and a source LIMIT (first n
      // rows in _rowid order) may then take other rows: rebuild.
      if (!Boolean.TRUE.equals(io.lancerest.spark.mv.query.StableRowIds.of(ds))) {
        return new Since(removed, null);
      }
      SourceHistory h = SourceHistory.after(ds, base);
      LOG.info("View '{}': source {}", view.viewName(), h);
      return new Since(removed, h.rowsUnchanged() ? h : null);
    } catch (RuntimeException e) {
      throw new UdtfRefreshException("Cannot open the source of view '" + view.viewName()
          + "' at '" + source.location() + "' version " + source.version() + ": "
          + e.getMessage(), e);
    }
  }

  private static Start start(UdtfSource source, ViewTables view) {
    long viewVersion;
    long viewRows;
    String base;
    boolean complete;
    Map<String, String> viewMeta;
    try (BufferAllocator allocator = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(allocator, view.viewUri(),
            CredentialRefresh.readOptions(view.viewStorageOptions()).build())) {
      viewVersion = ds.version();
      viewRows = ds.countRows();
      viewMeta = ds.getSchema().getCustomMetadata();
      base = viewMeta == null ? null : viewMeta.get(BASE_VERSION_KEY);
      complete = viewMeta != null
          && RefreshResult.JobStatus.DONE.name().equals(viewMeta.get(LAST_STATUS_KEY))
          && "0".equals(viewMeta.get(SKIPPED_KEY));
    } catch (RuntimeException e) {
      throw new UdtfRefreshException("Cannot open the table of view '" + view.viewName() + "' at '"
          + view.viewUri() + "': " + e.getMessage(), e);
    }
    // A UDTF view is rebuilt in full, so a source replaced under the same name (versions restart
    // at 1) needs no refusal, only no skip: at the recorded version number it is another table.
    // The source's latest version is not known here (source.version() may be an older
    // src_version), so a base version the source does not have is taken as cleaned up, not as
    // a replacement: only a version that exists with another write time counts.
    String replaced = null;
    try {
      replaced = base == null ? null : SourceIdentity.replaced(view.viewName(), source.location(),
          source.storageOptions(), viewMeta, Long.parseLong(base.trim()), Long.MAX_VALUE);
    } catch (NumberFormatException e) {
      // unreadable base version: never equal to the source's, so the view is rebuilt anyway
    }
    return new Start(viewVersion, viewRows, base, replaced, complete);
  }

  /**
   * What {@link #run} would do now, with nothing computed, written or committed. A rebuild
   * counts the partitions it would make: the distinct keys of the source query (one Spark job),
   * or the non-empty IVF partitions of the index.
   */
  public static RefreshPlan explain(SparkSession spark, ViewTables t, SourceQuery query,
      UdtfDefinition def, RefreshOptions options) {
    return explain(spark, v -> UdtfSource.query(t, query, v), t, options.srcVersion(), def,
        options);
  }

  private static RefreshPlan explain(SparkSession spark, LongFunction<UdtfSource> sourceAt,
      ViewTables t, Long srcVersion, UdtfDefinition def, RefreshOptions options) {
    options.checkApplicableTo(MaterializedViewKind.UDTF);
    RefreshContext ctx = new RefreshContext(spark, t.viewName(), "explain", null);
    return RefreshDriver.explain(ctx, srcVersion, () -> SourceVersions.latest(t.viewName(),
        t.sourceUri(), t.sourceStorageOptions()), kind(sourceAt, t, def, options));
  }

  /**
   * Refreshes the view in {@code ctx} (its job id, listener, caches and job record) to
   * {@code options.srcVersion()}, or to the latest source version when unset: the source
   * query's rows at the version each attempt uses.
   */
  public static RefreshResult run(RefreshContext ctx, ViewTables t, SourceQuery query,
      UdtfDefinition def, RefreshOptions options) {
    return result(run(ctx, v -> UdtfSource.query(t, query, v), t, options.srcVersion(), def,
        options));
  }

  /** A refresh whose attempts read {@code sourceAt} the version they refresh to. */
  static UdtfRefreshResult run(RefreshContext ctx, LongFunction<UdtfSource> sourceAt,
      ViewTables t, Long srcVersion, UdtfDefinition def, RefreshOptions options) {
    options.checkApplicableTo(MaterializedViewKind.UDTF);
    return RefreshDriver.refresh(ctx, t, srcVersion, options.maxRowsPerFragment(),
        () -> SourceVersions.latest(t.viewName(),
        t.sourceUri(), t.sourceStorageOptions()), kind(sourceAt, t, def, options));
  }

  /** The framework's row, the UDTF's counts as details. */
  static RefreshResult result(UdtfRefreshResult r) {
    Map<String, Long> details = new LinkedHashMap<>();
    details.put("partitions", r.partitions());
    details.put("partitions_computed", r.computed());
    details.put("partitions_reused", r.reused());
    details.put("udtf_calls", r.udtfCalls());
    return new RefreshResult(r.jobId(), r.status(), MaterializedViewKind.UDTF, r.sourceVersion(),
        r.rowsInserted(), r.rowsDeleted(), r.skipped().size(), r.duration().toMillis(), details);
  }

  /** UDTF views in {@link RefreshDriver}'s sequence. */
  private static ViewRefresh<UdtfRefreshResult> kind(LongFunction<UdtfSource> sourceAt,
      ViewTables view, UdtfDefinition def, RefreshOptions options) {
    return ViewRefresh.<UdtfRefreshResult>of(MaterializedViewKind.UDTF,
        r -> new ViewRefresh.Outcome(r.status(), r.sourceVersion(), r.rowsInserted(),
            r.rowsDeleted(), r.skipped().size()), (ctx, srcVersion) -> {
      UdtfSource source = sourceAt.apply(srcVersion);
      instantiate(def.className(), def.name());
      Start st = start(source, view);
      if (st.replaced == null && st.base != null) {
        try {
          SourceVersions.requireForward(view.viewName(), srcVersion, Long.parseLong(st.base.trim()));
        } catch (NumberFormatException e) {
          // unreadable base version: the view is rebuilt anyway
        }
      }
      Since since = st.upToDate(options, source) ? Since.NOTHING
          : since(source, view, def, options, st);
      return new ViewRefresh.Attempt<UdtfRefreshResult>() {
        @Override
        public boolean upToDate() {
          return st.upToDate(options, source);
        }

        @Override
        public UdtfRefreshResult skipped() {
          return new UdtfRefreshResult(ctx.jobId(), RefreshResult.JobStatus.SKIPPED,
              source.version(), st.viewVersion, 0, 0, 0, List.of(), 0, 0, 0, null,
              Duration.ofMillis(ctx.elapsedMillis()));
        }

        @Override
        public RefreshPlan explain() {
          return UdtfRefresh.plan(ctx.spark(), source, view, def, options, st, since);
        }

        @Override
        public StagedRefresh<UdtfRefreshResult> compute() {
          if (since.unchanged() != null) {
            return UdtfRefresh.recordUnchanged(ctx, source, view, st, since.unchanged());
          }
          if (since.removed() != null) {
            LOG.warn("View '{}' (job {}): {}; rebuilding it from source version {}",
                view.viewName(), ctx.jobId(), since.removed(), source.version());
          }
          return UdtfRefresh.compute(ctx, source, view, def, options, st);
        }
      };
    });
  }

  private static RefreshPlan plan(SparkSession spark, UdtfSource source, ViewTables view,
      UdtfDefinition def, RefreshOptions options, Start st, Since since) {
    Long from = null;
    try {
      from = st.base == null ? null : Long.parseLong(st.base.trim());
    } catch (NumberFormatException e) {
      // unreadable: shown as none
    }
    int fragments;
    long rows;
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(a, source.location(),
            CredentialRefresh.readOptions(source.storageOptions())
                .setVersion(source.version()).build())) {
      fragments = ds.getFragments().size();
      rows = ds.countRows();
    }
    if (st.upToDate(options, source)) {
      return new RefreshPlan(view.viewName(), MaterializedViewKind.UDTF, RefreshPlan.Mode.NO_OP,
          "the view already reflects source version " + source.version(), from,
          source.version(), fragments, List.of(), 0, st.viewRows, 0L, 0L,
          RefreshPlan.Write.NONE, null, "");
    }
    if (since.unchanged() != null) {
      return new RefreshPlan(view.viewName(), MaterializedViewKind.UDTF,
          RefreshPlan.Mode.INCREMENTAL, unchangedReason(since.unchanged(), from),
          from, source.version(), fragments, List.of(), 0, st.viewRows, 0L, 0L,
          RefreshPlan.Write.NONE, null, "");
    }
    String reason = options.force() ? "force = true"
        : st.replaced != null ? st.replaced
        : from == null ? "the view was never refreshed"
        : since.removed() != null ? since.removed() + "; a UDTF view is rebuilt"
        : "source changed since version " + from + "; a UDTF view is always rebuilt";
    String key = def.keyColumn();
    long partitions;
    if (def.partitionByIndexedColumn() != null) {
      IvfPartitions.IvfIndex index = IvfPartitions.inspect(source.location(),
          source.storageOptions(), source.version(), def.partitionByIndexedColumn());
      partitions = java.util.Arrays.stream(index.sizes()).filter(n -> n > 0).count();
    } else if (key == null) {
      partitions = 1;
    } else {
      partitions = source.reader().read(spark, false).select(key).distinct().count();
    }
    int tasks = key == null && def.partitionByIndexedColumn() == null ? 1
        : options.concurrency() != null ? options.concurrency()
        : TASKS_PER_SLOT * spark.sparkContext().defaultParallelism();
    return new RefreshPlan(view.viewName(), MaterializedViewKind.UDTF, RefreshPlan.Mode.FULL,
        reason + "; " + partitions + (partitions == 1 ? " partition" : " partitions")
        + " to compute", from, source.version(), fragments, null, rows, st.viewRows,
        st.viewRows, null, RefreshPlan.Write.SPARK_JOB, tasks, "the rows written are known only"
        + " by running the UDTF; partitions a failed run finished are reused");
  }

  private static String unchangedReason(SourceHistory h, Long from) {
    return "no row of the source changed since version " + from + " (" + h + "): no "
        + "partition is computed, the commit records the new source version";
  }

  /**
   * The refresh of a view whose source's commits since its base version changed no row (it was
   * only compacted): the rows and values the UDTF would read are the same, so is its output.
   * One commit without rows records the new base version (and when it was written) and the
   * job.
   */
  private static StagedRefresh<UdtfRefreshResult> recordUnchanged(RefreshContext ctx,
      UdtfSource source, ViewTables view, Start st, SourceHistory history) {
    String jobId = ctx.jobId();
    LOG.info("View '{}' (job {}): {}", view.viewName(), jobId,
        unchangedReason(history, st.baseVersion()));
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put(BASE_VERSION_KEY, Long.toString(source.version()));
    meta.put(SourceIdentity.KEY, SourceIdentity.versionTime(source.location(),
        source.storageOptions(), source.version()));
    meta.put(LAST_JOB_KEY, jobId);
    meta.put(LAST_STATUS_KEY, RefreshResult.JobStatus.DONE.name());
    meta.put(SKIPPED_KEY, "0");
    ViewCommit commit = ViewCommit.builder(view.viewUri(), st.viewVersion)
        .storageOptions(view.viewStorageOptions())
        .schemaMetadata(meta)
        .job(new ViewCommit.Job(jobId, MaterializedViewKind.UDTF, RefreshResult.JobStatus.DONE,
            source.version()))
        .build();
    return new StagedRefresh<>(commit, null, committed -> new UdtfRefreshResult(jobId,
        RefreshResult.JobStatus.DONE, source.version(), committed.version(), 0, 0, 0, List.of(),
        0, committed.rowsAdded(), committed.rowsDeleted(), null,
        Duration.ofMillis(ctx.elapsedMillis())), null);
  }

  private static StagedRefresh<UdtfRefreshResult> compute(RefreshContext ctx, UdtfSource source,
      ViewTables view, UdtfDefinition def, RefreshOptions options, Start st) {
    SparkSession spark = ctx.spark();
    String jobId = ctx.jobId();
    long viewVersion = st.viewVersion;
    String replaced = st.replaced;
    if (replaced != null) {
      LOG.info("{}; rebuilding it from source version {}", replaced, source.version());
    }
    String key = def.keyColumn();
    boolean ivf = def.partitionByIndexedColumn() != null;
    Dataset<Row> members = null;
    ctx.describe("compute partitions");
    try {
      Dataset<Row> df = source.reader().read(spark, ivf);
      List<String> inputColumns = inputColumns(def, df, view);
      if (ivf) {
        IvfPartitions.IvfIndex index = IvfPartitions.inspect(source.location(),
            source.storageOptions(), source.version(), def.partitionByIndexedColumn());
        members = IvfPartitions.membership(spark, source.location(), source.storageOptions(),
            source.version(), def.partitionByIndexedColumn(), index);
        df = df.join(members, "_rowid");
        inputColumns.add(IvfPartitions.PARTITION_ID);
      }
      boolean stripKey = key != null && !inputColumns.contains(key);
      List<Column> selected = new ArrayList<>();
      for (String c : inputColumns) {
        selected.add(df.col(c));
      }
      if (stripKey) {
        selected.add(df.col(key));
      }
      Dataset<Row> input = df.select(selected.toArray(Column[]::new));
      StructType inputSchema = new StructType(Arrays.copyOf(input.schema().fields(),
          inputColumns.size(), StructField[].class));

      String sourceTime = SourceIdentity.versionTime(source.location(), source.storageOptions(),
          source.version());
      PartitionCheckpoints checkpoints = new PartitionCheckpoints(view.viewUri(),
          view.viewStorageOptions(), def, source.version(), source.location() + "@" + (sourceTime == null ? "" : sourceTime));
      if (replaced != null) {
        // Checkpoints are keyed by source version number, which the new table reuses.
        checkpoints.clear();
      }
      Map<String, PartitionCheckpoints.Checkpoint> finished = checkpoints.load();
      if (!finished.isEmpty()) {
        LOG.info("View '{}': {} partitions finished by an earlier run are reused", view.viewName(),
            finished.size());
      }
      PartitionTask.Spec spec = new PartitionTask.Spec(def.name(), def.className(),
          def.outputSchema().toJson(), def.options(), def.errorHandling().toJson(), key,
          key == null ? -1 : Arrays.asList(input.columns()).indexOf(key), stripKey,
          inputSchema, source.version(), view.viewUri(), view.viewStorageOptions(),
          RefreshOptions.orDefault(options.maxRowsPerFragment(), 0), Set.copyOf(finished.keySet()), checkpoints);

      JavaRDD<Row> rows;
      if (key == null) {
        rows = input.coalesce(1).toJavaRDD();
      } else {
        int tasks = options.concurrency() != null ? options.concurrency()
            : TASKS_PER_SLOT * spark.sparkContext().defaultParallelism();
        // Range, not hash, partitioning: hashing a few keys into as many tasks leaves some
        // tasks with two or three keys and others with none (16 int keys into 16 tasks: up to
        // 3 in one), and the slot that draws such a task finishes last. Range bounds come
        // from a sample of the input, so tasks get about equal row counts, one key never
        // split. The sample costs one extra pass over the source query; a function worth a
        // UDTF view costs far more than reading its input.
        rows = input.repartitionByRange(tasks, input.col(key))
            .sortWithinPartitions(input.col(key)).toJavaRDD();
      }
      JavaRDD<PartitionOutcome> outcomes = rows.mapPartitions(new PartitionTask(spec));
      outcomes = withResources(spark, outcomes, def.resources(), view.viewName());
      List<PartitionOutcome> collected;
      long computeStarted = System.nanoTime();
      try {
        collected = outcomes.collect();
        LOG.info("View '{}' (job {}): partitions computed in {} ms", view.viewName(), jobId,
            elapsed(computeStarted).toMillis());
      } catch (RuntimeException e) {
        throw new UdtfRefreshException("Refresh of view '" + view.viewName() + "' (job " + jobId
            + ") failed in Spark; nothing was committed and the view stays at version "
            + viewVersion + ": " + rootMessage(e), e);
      }
      return commit(ctx, view, def, source, sourceTime, options, viewVersion, collected,
          finished, checkpoints);
    } finally {
      if (members != null) {
        members.unpersist();
      }
    }
  }

  private static StagedRefresh<UdtfRefreshResult> commit(RefreshContext ctx, ViewTables view,
      UdtfDefinition def, UdtfSource source, String sourceTime, RefreshOptions options,
      long viewVersion, List<PartitionOutcome> outcomes,
      Map<String, PartitionCheckpoints.Checkpoint> finished, PartitionCheckpoints checkpoints) {
    String jobId = ctx.jobId();
    List<FragmentMetadata> fragments = new ArrayList<>();
    List<UdtfRefreshResult.SkippedPartition> skipped = new ArrayList<>();
    List<PartitionOutcome> failed = new ArrayList<>();
    long computed = 0;
    long reused = 0;
    long calls = 0;
    for (PartitionOutcome o : outcomes) {
      calls += o.calls();
      switch (o.status()) {
        case DONE -> {
          computed++;
          fragments.addAll(FragmentShipping.fromBytes(o.fragments()));
        }
        case REUSED -> {
          reused++;
          fragments.addAll(FragmentShipping.fromBytes(finished.get(o.keyId()).fragments()));
        }
        // The NULL partition is reported as null, not as text a real key 'NULL' could also be.
        case SKIPPED -> skipped.add(new UdtfRefreshResult.SkippedPartition(
            PartitionKeys.NULL_KEY_ID.equals(o.keyId()) ? null : o.keyDisplay(),
            o.calls(), o.errorClass(), o.errorMessage()));
        case FAILED -> failed.add(o);
      }
    }
    long total = outcomes.size();
    MaterializedViewException tooManySkips = null;
    try {
      def.errorHandling().checkSkips(skipped.size(), total, "partitions");
    } catch (MaterializedViewException e) {
      tooManySkips = e;
    }
    if (!failed.isEmpty() || tooManySkips != null) {
      // The refresh commits nothing, so no error is recorded in the errors table; the log is
      // where the skipped partitions of a failed refresh can still be seen.
      for (UdtfRefreshResult.SkippedPartition s : skipped) {
        LOG.warn("View '{}' (job {}) fails; partition {} would have been skipped after {} "
            + "attempt(s): {}: {}", view.viewName(), jobId, s.partitionKey(), s.attempts(),
            s.errorClass(), s.errorMessage());
      }
    }
    if (!failed.isEmpty()) {
      PartitionOutcome f = failed.get(0);
      Long now = currentVersion(view);
      if (now != null && now > viewVersion) {
        // Another refresh of this view committed meanwhile and cleared the checkpoints this
        // run was writing into: the failure is a side effect of that, and a rerun starts from
        // the new version.
        throw new io.lancerest.spark.mv.commit.ViewCommitConflictException("View table '"
            + view.viewUri() + "' was modified by another commit after version " + viewVersion
            + " (now " + now + ", a concurrent refresh of view '" + view.viewName() + "') while job "
            + jobId + " ran; partition " + f.keyDisplay() + " then failed: " + f.errorClass()
            + ": " + f.errorMessage() + ". Nothing of this job was committed. Re-run the "
            + "refresh if the view still needs it.", null);
      }
      throw new UdtfRefreshException("Refresh of view '" + view.viewName() + "' (job " + jobId
          + ") failed: partition " + f.keyDisplay() + " failed after " + f.calls()
          + " attempt(s): " + f.errorClass() + ": " + f.errorMessage() + ". Nothing was "
          + "committed; the view stays at version " + viewVersion + ". " + (computed + reused)
          + " finished partitions are checkpointed and will be reused by the next refresh.");
    }
    if (tooManySkips != null) {
      MaterializedViewException e = tooManySkips;
      throw new UdtfRefreshException("Refresh of view '" + view.viewName() + "' (job " + jobId
          + ") failed: " + e.getMessage() + ". First error: partition "
          + skipped.get(0).partitionKey() + ": " + skipped.get(0).errorClass() + ": "
          + skipped.get(0).errorMessage() + ". The view stays at version " + viewVersion
          + ".", e);
    }
    RefreshResult.JobStatus status = skipped.isEmpty()
        ? RefreshResult.JobStatus.DONE : RefreshResult.JobStatus.PARTIAL;
    String errorsTable = null;
    ErrorsTable.Staged errors = ErrorsTable.Staged.NONE;
    if (!skipped.isEmpty()) {
      errorsTable = view.errorsTableUri();
      List<ErrorsTable.Entry> entries = new ArrayList<>(skipped.size());
      for (UdtfRefreshResult.SkippedPartition s : skipped) {
        entries.add(new ErrorsTable.Entry(null, def.keyColumn(), s.partitionKey(), s.attempts(),
            s.errorClass(), s.errorMessage()));
      }
      try {
        errors = ErrorsTable.stage(errorsTable, view.viewStorageOptions(), new ErrorsTable.Origin(
            jobId, view.viewName(), MaterializedViewKind.UDTF, def.name(), def.version(),
            source.version()), entries);
      } catch (MaterializedViewException e) {
        throw new UdtfRefreshException("Refresh of view '" + view.viewName() + "' (job " + jobId
            + ") failed: " + e.getMessage() + ". The view stays at version " + viewVersion
            + ".", e);
      }
      LOG.warn("View '{}' (job {}): {} of {} partitions skipped after failing; the view is "
          + "PARTIAL, errors go to '{}'", view.viewName(), jobId, skipped.size(), total,
          errorsTable);
    }
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put(BASE_VERSION_KEY, Long.toString(source.version()));
    meta.put(SourceIdentity.KEY, sourceTime); // null (cannot tell) removes a stale one
    meta.put(LAST_JOB_KEY, jobId);
    meta.put(LAST_STATUS_KEY, status.name());
    meta.put(SKIPPED_KEY, Integer.toString(skipped.size()));
    // the names these had before they moved under lancerest::view:: (null removes them)
    for (String legacy : List.of("lancerest::udtf::last_job_id", "lancerest::udtf::last_status",
        "lancerest::udtf::skipped_partitions")) {
      meta.put(legacy, null);
    }
    ViewCommit commit = ViewCommit.builder(view.viewUri(), viewVersion)
        .storageOptions(view.viewStorageOptions())
        .replaceAllRows()
        .addFragments(fragments)
        .schemaMetadata(meta)
        .job(new ViewCommit.Job(jobId, MaterializedViewKind.UDTF, status, source.version()))
        .build();
    long computedParts = computed;
    long reusedParts = reused;
    long udtfCalls = calls;
    String errorsAt = errorsTable;
    return new StagedRefresh<>(commit, errors, committed -> {
      LOG.info("View '{}' (job {}) {}: version {} from source version {}, {} partitions ({} "
          + "computed, {} reused, {} skipped), {} rows", view.viewName(), jobId, status,
          committed.version(), source.version(), total, computedParts, reusedParts,
          skipped.size(), committed.rowsAdded());
      return new UdtfRefreshResult(jobId, status, source.version(), committed.version(), total,
          computedParts, reusedParts, skipped, udtfCalls, committed.rowsAdded(),
          committed.rowsDeleted(), errorsAt, Duration.ofMillis(ctx.elapsedMillis()));
    }, checkpoints::clear);
  }

  private static List<String> inputColumns(UdtfDefinition def, Dataset<Row> df, ViewTables view) {
    List<String> available = new ArrayList<>(Arrays.asList(df.columns()));
    available.remove("_rowid");
    List<String> out = def.inputColumns() == null ? available
        : new ArrayList<>(def.inputColumns());
    for (String c : out) {
      if (!available.contains(c)) {
        throw new UdtfValidationException("View '" + view.viewName() + "': input column '" + c
            + "' is not produced by the source query (its columns are " + available + ")");
      }
    }
    if (def.partitionBy() != null && !available.contains(def.partitionBy())) {
      throw new UdtfValidationException("View '" + view.viewName() + "': partition column '"
          + def.partitionBy() + "' is not produced by the source query (its columns are "
          + available + ")");
    }
    return out;
  }

  /**
   * Applies the UDTF's resource requests to the stage that calls it. Stage-level scheduling
   * needs YARN, Kubernetes or standalone (with dynamic allocation); elsewhere (local mode, for
   * one) the requests are advisory and logged once per JVM.
   */
  static <T> JavaRDD<T> withResources(SparkSession spark, JavaRDD<T> rdd,
      UdtfResources resources, String view) {
    String discovery = spark.sparkContext().getConf()
        .get("spark.executor.resource.gpu.discoveryScript", "");
    Optional<ResourceProfile> profile = resources.toResourceProfile(discovery);
    if (profile.isEmpty()) {
      return rdd;
    }
    String master = spark.sparkContext().master();
    if (master.startsWith("local")) {
      advisory(view, resources, "Spark runs in local mode (" + master + "), which has no "
          + "stage-level scheduling");
      return rdd;
    }
    try {
      return new JavaRDD<>(rdd.rdd().withResources(profile.get()), rdd.classTag());
    } catch (RuntimeException e) {
      advisory(view, resources, "the cluster manager refused a ResourceProfile: "
          + e.getMessage());
      return rdd;
    }
  }

  private static void advisory(String view, UdtfResources r, String why) {
    if (RESOURCE_ADVISORY_LOGGED.compareAndSet(false, true)) {
      LOG.warn("UDTF resources for view '{}' (num_cpus={}, num_gpus={}, memory={} bytes) are "
          + "advisory: {}", view, r.numCpus(), r.numGpus(), r.memoryBytes(), why);
    }
  }

  /** Loads the UDTF class; a definition error when it is missing or not a {@link BatchUdtf}. */
  static BatchUdtf instantiate(String className, String udtfName) {
    Class<?> c;
    try {
      c = Class.forName(className, true, Thread.currentThread().getContextClassLoader());
    } catch (ClassNotFoundException e) {
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className
          + " is not on the classpath; add its jar (spark.jars / --jars)", e);
    }
    if (!BatchUdtf.class.isAssignableFrom(c)) {
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className
          + " does not implement " + BatchUdtf.class.getName());
    }
    try {
      return (BatchUdtf) c.getConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className
          + " needs a public no-argument constructor (" + e + ")", e);
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (cause: " + t + ")";
  }

  private static Duration elapsed(long startedNanos) {
    return Duration.ofNanos(System.nanoTime() - startedNanos);
  }

  /** The view table's latest version, or null when it cannot be read. */
  private static Long currentVersion(ViewTables view) {
    try (BufferAllocator allocator = new RootAllocator();
        org.lance.Dataset ds = org.lance.Dataset.open(allocator, view.viewUri(),
            CredentialRefresh.readOptions(view.viewStorageOptions()).build())) {
      return ds.version();
    } catch (RuntimeException e) {
      return null;
    }
  }
}
