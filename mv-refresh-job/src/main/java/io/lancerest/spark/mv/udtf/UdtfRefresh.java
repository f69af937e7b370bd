package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.FunctionClasses;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.fragments.SourceHistory;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.layout.ErrorsTable;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.RefreshDriver;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import org.apache.spark.sql.SparkSession;
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
 *       checkpointed, so a failed or PARTIAL run's finished partitions are reused by the next
 *       run of the same UDTF name, version and source version: a PARTIAL view's retry computes
 *       only the partitions it skipped.</li>
 *   <li>Failures follow the view's {@code error_handling} ({@link
 *       io.lancerest.spark.mv.definition.ErrorHandling}) per partition: a failed refresh commits nothing;
 *       skipped partitions are recorded in the errors table ({@link ErrorsTable}: staged
 *       before the commit, appended after it) and the result is {@code PARTIAL}.</li>
 *   <li>The driver commits all fragments at once with {@link ViewCommit} (replace all rows,
 *       schema metadata with the base version), then drops the checkpoints when the result is
 *       {@code DONE}; a {@code PARTIAL} one keeps them for its retry. A rebuild ({@code force},
 *       a replaced source) drops them before it starts.</li>
 * </ol>
 *
 * <p>This class runs those steps in {@link RefreshDriver}'s sequence; each phase is its own type:
 * {@link UdtfStart} and {@link UdtfSince} (where the refresh starts), {@link UdtfCompute} (the
 * partitions on Spark), {@link UdtfCommit} (the one commit), {@link UdtfPlan} (EXPLAIN).
 */
public final class UdtfRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(UdtfRefresh.class);
  /** Geneva's key for the source version a UDTF view was built from. */
  public static final String BASE_VERSION_KEY = "geneva::view::base_table_version";
  public static final String LAST_JOB_KEY = "lancerest::view::udtf::last_job_id";
  public static final String LAST_STATUS_KEY = "lancerest::view::udtf::last_status";
  public static final String SKIPPED_KEY = "lancerest::view::udtf::skipped_partitions";

  private UdtfRefresh() {}

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
    return RefreshDriver.explain(ctx, t, srcVersion, options.force(),
        kind(sourceAt, t, def, options));
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
    return RefreshDriver.refresh(ctx, t, srcVersion, options.force(),
        options.maxRowsPerFragment(), kind(sourceAt, t, def, options));
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
    return ViewRefresh.<UdtfRefreshResult>of(MaterializedViewKind.UDTF, function(def),
        r -> new ViewRefresh.Outcome(r.status(), r.sourceVersion(), r.rowsInserted(),
            r.rowsDeleted(), r.skipped().size()), (ctx, target) -> {
      UdtfSource source = sourceAt.apply(target.srcVersion());
      // the source as the driver opened it for this attempt (a UDTF view reads its own source)
      org.lance.Dataset opened = target.datasets().source(source.version());
      instantiate(def.className(), def.name());
      UdtfStart st = UdtfStart.of(target);
      UdtfSince since = st.upToDate(source) ? UdtfSince.NOTHING
          : UdtfSince.of(source, opened, view, def, options, st);
      return new ViewRefresh.Attempt<UdtfRefreshResult>() {
        @Override
        public boolean upToDate() {
          return st.upToDate(source);
        }

        @Override
        public UdtfRefreshResult skipped() {
          return new UdtfRefreshResult(ctx.jobId(), RefreshResult.JobStatus.SKIPPED,
              source.version(), st.viewVersion(), 0, 0, 0, List.of(), 0, 0, 0, null,
              Duration.ofMillis(ctx.elapsedMillis()));
        }

        @Override
        public RefreshPlan explain() {
          return UdtfPlan.explain(ctx.spark(), source, opened, view, def, options, st,
              since);
        }

        @Override
        public StagedRefresh<UdtfRefreshResult> compute() {
          if (since.unchanged() != null) {
            return UdtfCommit.recordUnchanged(ctx, source, view, st, since.unchanged());
          }
          if (since.removed() != null) {
            LOG.warn("View '{}' (job {}): {}; rebuilding it from source version {}",
                view.viewName(), ctx.jobId(), since.removed(), source.version());
          }
          return UdtfCompute.compute(ctx, source, opened, view, def, options, st);
        }
      };
    });
  }

  /** The view's UDTF as a failure of it names it. */
  static String function(UdtfDefinition def) {
    return "UDTF '" + def.name() + "' (" + def.className() + ")";
  }

  /** Loads the UDTF class; a definition error when it is missing or not a {@link BatchUdtf}. */
  static BatchUdtf instantiate(String className, String udtfName) {
    Class<?> c;
    try {
      c = FunctionClasses.load(className); // not initialized until it proved to be a BatchUdtf
    } catch (ClassNotFoundException e) {
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className
          + " is not on the classpath; add its jar (spark.jars / --jars)", e);
    } catch (LinkageError e) {
      // e.g. a jar built against interfaces of an older release (their package has moved)
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className
          + " cannot be loaded (" + e + "); rebuild its jar against this release's "
          + BatchUdtf.class.getPackageName() + " interfaces", e);
    }
    if (!BatchUdtf.class.isAssignableFrom(c)) {
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className
          + " does not implement " + BatchUdtf.class.getName());
    }
    try {
      return (BatchUdtf) FunctionClasses.newInstance(c);
    } catch (FunctionClasses.InitializerFailedException e) {
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className + " "
          + e.getMessage(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new UdtfValidationException("UDTF '" + udtfName + "': class " + className
          + " needs a public no-argument constructor (" + e + ")", e);
    }
  }
}
