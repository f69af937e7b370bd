package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Expands parents into view fragments that are not committed yet: on the driver when they are
 * few ({@link LocalExpansion}), else in a Spark job of {@link ChunkerTask}s.
 */
final class ParentExpander {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkerRefresh.class);
  /** More rowid ranges than this and the task filters by bitmap instead of pushing them down. */
  private static final int MAX_PUSHED_RANGES = 256;

  private final ChunkerRun run;
  private final RefreshContext ctx;
  private final ViewTables t;
  private final ChunkerLayout layout;
  private final Schema viewTable;

  ParentExpander(ChunkerRun run, ChunkerLayout layout, Schema viewTable) {
    this.run = run;
    this.ctx = run.ctx();
    this.t = run.t();
    this.layout = layout;
    this.viewTable = viewTable;
  }

  /** Expands the parents {@code p} found to expand; nothing is committed. */
  static Expansion expand(PreparedRefresh p) {
    SourceState state = p.state;
    Roaring64NavigableMap toExpand = state.toExpand;
    boolean everyParent = state.wholeSource && state.present.equals(toExpand);
    // Only the fragments the change set names hold parents to expand: read just those.
    Dataset<Row> expandFrom = state.fragments == null ? p.source
        : FragmentScopedRead.restrict(p.source, new java.util.HashSet<>(state.fragments));
    if (toExpand.isEmpty()) {
      return new Expansion();
    }
    ParentExpander ex = new ParentExpander(p.run, p.layout, p.viewTable);
    return everyParent || state.fragments == null
        ? ex.expand(expandFrom, toExpand, everyParent, null)
        : ex.expandChanged(expandFrom, state.fragments, p.srcVersion, toExpand);
  }

  /**
   * Expands the parents {@code ids} of the changed {@code fragments}: on the driver when they
   * are few (no Spark job's fixed cost), else on executors; nothing is committed.
   */
  private Expansion expandChanged(Dataset<Row> scoped, List<Integer> fragments,
      long srcVersion, Roaring64NavigableMap ids) {
    ctx.describe("expand " + ids.getLongCardinality() + " parents on the driver");
    LocalExpansion.Outcome local;
    try {
      local = LocalExpansion.tryExpand(ctx, run.datasets().source(srcVersion),
          ChunkerRefresh.project(scoped, run.def()), fragments, ids,
          task(null, null));
    } finally {
      ctx.describe(null);
    }
    LOG.info("Chunker view {} (job {}): expansion on the {}: {}", t.viewName(), run.jobId(),
        local.output() != null ? "driver" : "Spark path", local.why());
    if (local.output() != null) {
      ctx.observe(RefreshListener.Probe.WRITE_PATH, "driver");
      ctx.observe(RefreshListener.Probe.CHILD_ROWS_BUFFERED, local.output().maxBufferedRows);
      return Expansion.of(List.of(local.output()));
    }
    ctx.observe(RefreshListener.Probe.WRITE_PATH, "spark: " + local.why());
    return expand(scoped, ids, false, null);
  }

  /** The chunker a task runs; {@code expand}: the parents it keeps ({@code null}: all). */
  private ChunkerTask task(Broadcast<byte[]> expand, Map<Long, Integer> caps) {
    Schema plain = new Schema(viewTable.getFields().stream().map(f -> new Field(f.getName(),
        new org.apache.arrow.vector.types.pojo.FieldType(f.isNullable(), f.getType(),
            f.getDictionary()), f.getChildren())).toList());
    ChunkerDefinition def = run.def();
    return new ChunkerTask(t.viewName(), t.viewUri(), t.viewStorageOptions(), def.function(),
        def.errorHandling(), plain, layout.inputSchema(), plusOne(layout.inputPositions()),
        plusOne(layout.inheritedPositions()), run.settings(), expand, caps);
  }

  /**
   * Runs the chunker over {@code ids} of {@code source} on executors, each parent's children
   * cut at its entry in {@code caps} (when given); nothing is committed.
   */
  Expansion expand(Dataset<Row> source, Roaring64NavigableMap ids, boolean everyParent,
      Map<Long, Integer> caps) {
    Dataset<Row> in = ChunkerRefresh.project(source, run.def());
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
    long items = run.workItems(parents);
    JavaRDD<Row> rdd = in.toJavaRDD();
    int partitions = rdd.getNumPartitions();
    int target = run.tasks(partitions, items);
    if (partitions > target) {
      rdd = rdd.coalesce(target);
    } else if (partitions < target) {
      // Few source fragments: spread the parents so that `target` tasks can run.
      rdd = rdd.repartition(target);
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(run.spark().sparkContext());
    Broadcast<byte[]> bc = jsc.broadcast(ParentIds.toBytes(ids));
    ChunkerTask task = task(bc, caps);
    ctx.describe("expand " + parents + " parents in " + items + " work items, "
        + rdd.getNumPartitions() + " tasks");
    List<TaskOutput> outs;
    try {
      // a task's failure reaches the refresh's driver as Spark reports it (TaskFailures)
      outs = rdd.mapPartitions(task).collect();
    } finally {
      bc.destroy();
    }
    ctx.observe(RefreshListener.Probe.CHILD_ROWS_BUFFERED, outs.stream()
        .mapToLong(out -> out.maxBufferedRows).max().orElse(0));
    return Expansion.of(outs);
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
}
