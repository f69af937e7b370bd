package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compute phase of a UDTF rebuild: the source query's rows, range-partitioned by key over
 * Spark tasks that call the function partition by partition and write its output as
 * uncommitted, checkpointed fragments; their outcomes go to {@link UdtfCommit}.
 */
final class UdtfCompute {
  // The refresh's own log category: these lines are steps of one UDTF refresh.
  private static final Logger LOG = LoggerFactory.getLogger(UdtfRefresh.class);
  /**
   * Tasks per task slot when {@code concurrency} is not given: more tasks than slots let a slot
   * that drew cheap partitions take another task while a costly one is still running.
   */
  static final int TASKS_PER_SLOT = 4;

  private UdtfCompute() {}

  /** Computes every partition of the view from {@code source} and stages their commit. */
  static StagedRefresh<UdtfRefreshResult> compute(RefreshContext ctx, UdtfSource source,
      org.lance.Dataset opened, ViewTables view, UdtfDefinition def, RefreshOptions options,
      UdtfStart st) {
    SparkSession spark = ctx.spark();
    String jobId = ctx.jobId();
    long viewVersion = st.viewVersion();
    String key = def.keyColumn();
    boolean ivf = def.partitionByIndexedColumn() != null;
    Dataset<Row> members = null;
    ctx.describe("compute partitions");
    try {
      Dataset<Row> df = source.reader().read(spark, ivf);
      List<String> inputColumns = inputColumns(def, df, view);
      if (ivf) {
        IvfPartitions.IvfIndex index = IvfPartitions.inspect(opened, source.location(),
            def.partitionByIndexedColumn());
        members = IvfPartitions.membership(spark, source.table(), opened,
            def.partitionByIndexedColumn(), index);
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

      String sourceTime = st.sourceTime();
      PartitionCheckpoints checkpoints = new PartitionCheckpoints(view.viewUri(), view.viewStorageOptions(), def, source.version(), source.location() + "@" + (sourceTime == null ? "" : sourceTime));
      if (st.rebuild() != null) {
        // A rebuild computes every partition: force = true means exactly that (a PARTIAL
        // refresh keeps its checkpoints, which would otherwise stand in for most of them), and
        // checkpoints are keyed by source version number, which a replaced source reuses.
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
      outcomes = withResources(spark, outcomes, def.resources(), view.viewName(),
          ctx.caches().get(AdvisoryLogged.class, AdvisoryLogged::new));
      long computeStarted = System.nanoTime();
      // a failed Spark job reaches the refresh's driver as Spark reports it (TaskFailures)
      List<PartitionOutcome> collected = outcomes.collect();
      LOG.info("View '{}' (job {}): partitions computed in {} ms", view.viewName(), jobId,
          elapsed(computeStarted).toMillis());
      return UdtfCommit.commit(ctx, view, def, source, sourceTime, options, viewVersion, collected,
          finished, checkpoints);
    } finally {
      if (members != null) {
        members.unpersist();
      }
    }
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
   * one) the requests are advisory and logged once per catalog ({@code logged}).
   */
  static <T> JavaRDD<T> withResources(SparkSession spark, JavaRDD<T> rdd,
      UdtfResources resources, String view, AdvisoryLogged logged) {
    String discovery = spark.sparkContext().getConf()
        .get("spark.executor.resource.gpu.discoveryScript", "");
    Optional<ResourceProfile> profile = resources.toResourceProfile(discovery);
    if (profile.isEmpty()) {
      return rdd;
    }
    String master = spark.sparkContext().master();
    if (master.startsWith("local")) {
      advisory(logged, view, resources, "Spark runs in local mode (" + master + "), which has no "
          + "stage-level scheduling");
      return rdd;
    }
    try {
      return new JavaRDD<>(rdd.rdd().withResources(profile.get()), rdd.classTag());
    } catch (RuntimeException e) {
      advisory(logged, view, resources, "the cluster manager refused a ResourceProfile: "
          + e.getMessage());
      return rdd;
    }
  }

  /** Whether a catalog has said that resource requests are advisory where it runs. */
  static final class AdvisoryLogged {
    private final AtomicBoolean logged = new AtomicBoolean();
  }

  private static void advisory(AdvisoryLogged once, String view, UdtfResources r, String why) {
    if (once.logged.compareAndSet(false, true)) {
      LOG.warn("UDTF resources for view '{}' (num_cpus={}, num_gpus={}, memory={} bytes) are "
          + "advisory: {}", view, r.numCpus(), r.numGpus(), r.memoryBytes(), why);
    }
  }

  private static Duration elapsed(long startedNanos) {
    return Duration.ofNanos(System.nanoTime() - startedNanos);
  }
}
