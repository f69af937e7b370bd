package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.fragments.LanceReads;
import io.lancerest.spark.mv.fragments.SourceChanges;
import io.lancerest.spark.mv.refresh.RefreshContext;
import io.lancerest.spark.mv.refresh.StagedRefresh;
import io.lancerest.spark.mv.refresh.ViewRefresh;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.result.RefreshPlan;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;

/**
 * One attempt of an aggregate view's refresh ({@link AggregateState}). Incrementally, from the
 * source's change set since the watermark ({@link SourceChanges}): the rows of the new and
 * rewritten fragments at the target version add to their groups, the rows that left changed
 * fragments, read at the watermark version, subtract from theirs; each group touched gets its
 * new state from its view row and that change, and a group whose state cannot tell its new
 * values ({@link AggregateState#merge}) is recomputed from its rows at the target version. The
 * view rows of touched groups are deleted and their new rows written, in the one commit every
 * refresh makes. A rebuild aggregates the whole source.
 */
record AggregateAttempt(RefreshContext ctx, ViewTables t, SourceQuery q, RefreshOptions o,
    RefreshStart s) implements ViewRefresh.Attempt<RefreshResult> {
  /** Groups to recompute that are named in a filter rather than joined. */
  static final int PUSHED_GROUPS = 1024;

  @Override
  public boolean upToDate() {
    return s.upToDate();
  }

  @Override
  public RefreshResult skipped() {
    return s.skipped(ctx);
  }

  private Dataset<Row> sourceAt(long version) {
    return QueryLayout.readSource(ctx.spark(), t.source(), version, s.sourceBatchRows);
  }

  private AggregateState state(Dataset<Row> source) {
    AggregateState st = AggregateState.of(q, source, t.viewName());
    List<String> want = st.columnNames();
    List<String> have = List.of(s.target.fieldNames());
    if (!want.equals(have)) {
      throw new InvalidViewDefinitionException("View " + t.viewName() + " has columns " + have
          + " but its definition needs " + want + "; the view table was altered. Re-create the "
          + "view");
    }
    return st;
  }

  /**
   * Setting: rebuild when applying the change set would read at least this fraction of the
   * source's rows; 0 turns the rule off.
   */
  static final String REBUILD_FRACTION_CONF = "spark.lancerest.mv.query.aggregateRebuildFraction";
  static final double DEFAULT_REBUILD_FRACTION = 0.5;

  /** The change set to apply, or why the view is rebuilt instead. */
  private record Plan(SourceChanges changes, String rebuild) {}

  /**
   * @param placeable whether departed rows can be read by place (the columns they need are
   *     known); asked only when the view is not rebuilt for another reason
   */
  private Plan plan(java.util.function.BooleanSupplier placeable) {
    if (s.replaceAll) {
      return new Plan(null, s.rebuildReason());
    }
    if (s.watermark == 0 || !ctx.listener().readChangedFragmentsOnly()) {
      return new Plan(null, "the view has no change set to apply");
    }
    SourceChanges ch = new FragmentDiffRead(ctx, t).changes(s);
    if (ch.diff == null) {
      return new Plan(null, ch.why);
    }
    // The arrived rows are read whole, and so are the fragments that hold departed rows unless
    // those rows are read by their places (DepartedRows: their deletion files are local and
    // the driver may hold them). When that is most of the table, aggregating the whole table
    // reads no more and does less.
    long departed = ch.departed.getLongCardinality();
    long read = ch.rescanRows + departed;
    long driverMax = driverRows();
    if (!placeable.getAsBoolean()
        || io.lancerest.spark.mv.fragments.DeletionVectors.localRoot(t.source().uri()) == null
        || driverMax <= 0 || departed > driverMax) {
      java.util.Map<Integer, Long> rows = new java.util.HashMap<>();
      s.sourceAt.forEach(f -> rows.put(f.getId(), f.getPhysicalRows()));
      for (int id : ch.diff.deletionsChanged) {
        read += rows.getOrDefault(id, 0L);
      }
    }
    double fraction = rebuildFraction();
    if (fraction > 0 && s.sourceRows > 0 && read >= fraction * s.sourceRows) {
      return new Plan(null, String.format("applying the change would read %,d rows of the "
          + "source's %,d (the fragments it touched), at least %s = %s of them; aggregating "
          + "the whole source reads no more", read, s.sourceRows, REBUILD_FRACTION_CONF,
          fraction));
    }
    return new Plan(ch, null);
  }

  private double rebuildFraction() {
    String v = ctx.spark().conf().get(REBUILD_FRACTION_CONF,
        String.valueOf(DEFAULT_REBUILD_FRACTION));
    try {
      double d = Double.parseDouble(v.trim());
      if (d >= 0 && !Double.isInfinite(d)) {
        return d;
      }
    } catch (NumberFormatException e) {
      // falls through to the error
    }
    throw new io.lancerest.spark.mv.error.InvalidOptionException(REBUILD_FRACTION_CONF, v,
        "a number of 0 or more (the default " + DEFAULT_REBUILD_FRACTION + "; 0 never rebuilds for "
        + "cost)");
  }

  @Override
  public StagedRefresh<RefreshResult> compute() {
    if (s.watermarkRemoved != null) {
      LOG.warn("View {} (job {}): {}", t.viewName(), ctx.jobId(), s.watermarkRemovedReason());
    }
    long t0 = System.currentTimeMillis();
    Dataset<Row> now = sourceAt(s.srcVersion);
    AggregateState st = state(now);
    // The change set compares versions with the same columns: one set serves both sides.
    // Found only when a change set is applied (it analyses a plan).
    StructType[] read = new StructType[1];
    Plan plan = plan(() -> (read[0] = DepartedRows.columnsRead(st, now)) != null);
    StructType columns = read[0];
    SourceChanges ch = plan.changes();
    if (ch == null) {
      ctx.describe("aggregate the source");
      LOG.info("View {} (job {}): source version {} (watermark {}): rebuilding the aggregate "
          + "view ({})", t.viewName(), ctx.jobId(), s.srcVersion, s.watermark, plan.rebuild());
      Dataset<Row> rows = st.viewRows(st.totals(st.changes(now, 1)), s.target);
      WrittenFragments w = new SparkRefreshWrite(ctx, t, o).write(rows,
          WriteTask.every(t, s.plain, o), 1);
      return QueryCommit.stage(ctx, t, s, w, List.of(), true, String.format(
          "aggregate and write %d ms", System.currentTimeMillis() - t0));
    }
    ctx.observe(RefreshListener.Probe.SOURCE_FRAGMENTS_READ, List.copyOf(ch.rescan));
    ctx.observe(RefreshListener.Probe.FRAGMENT_DIFF, ch.diff);
    List<Row> arrived = arrivedRows(ch, columns);
    DepartedRows.Picked picked = ch.departed.isEmpty()
        ? new DepartedRows.Picked(List.of(), java.util.Set.of())
        : DepartedRows.pick(ctx, t, s, ch, columns);
    List<Row> viewRows = viewRows();
    if (arrived != null && picked.complete() && viewRows != null) {
      StagedRefresh<RefreshResult> local = LocalAggregateRefresh.tryRefresh(ctx, t, s, o, st,
          q.aggregation(), ch, new LocalAggregateRefresh.Inputs(columns, arrived,
              picked.rows(), viewRows), merged -> recomputed(now, merged), t0);
      if (local != null) {
        return local;
      }
    }
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(ctx.spark().sparkContext());
    Broadcast<byte[]> departed = jsc.broadcast(RowIdSet.serialize(ch.departed));
    Dataset<Row> merged = null;
    try {
      Dataset<Row> delta = st.delta(changeRows(st, now, ch, columns, arrived, picked,
          departed));
      merged = st.merge(delta, view(viewRows)).persist(StorageLevel.MEMORY_AND_DISK());
      ctx.describe("merge the changes of " + ch.departed.getLongCardinality()
          + " departed rows and " + ch.rescanRows + " rows of changed fragments into the "
          + "groups");
      if (s.viewRows + ch.rescanRows <= driverRows()) {
        // One computed copy on the driver: which groups are recomputed (a floating sum's drift
        // test depends on the order of its additions) is decided once for both sides.
        List<Row> all = merged.collectAsList();
        Dataset<Row> local = ctx.spark().createDataFrame(all, merged.schema());
        merged.unpersist();
        merged = local;
      }
      List<Row> touched = merged.select("__v_addr", "__recompute").collectAsList();
      long t1 = System.currentTimeMillis();
      List<Long> deletes = new ArrayList<>();
      long recompute = 0;
      for (Row r : touched) {
        if (!r.isNullAt(0)) {
          deletes.add(r.getLong(0));
        }
        recompute += r.getBoolean(1) ? 1 : 0;
      }
      Dataset<Row> write = st.viewRows(merged.where("NOT __recompute"), s.target);
      if (recompute > 0) {
        write = write.unionByName(st.viewRows(st.totals(st.changes(
            recomputed(now, merged), 1)), s.target));
      }
      LOG.info("View {} (job {}): source version {} (watermark {}): {}; {} source rows left "
          + "changed fragments, {} rows arrived in them; {} groups touched, {} in the view, {} "
          + "recomputed from their rows", t.viewName(), ctx.jobId(), s.srcVersion, s.watermark,
          ch.diff, ch.departed.getLongCardinality(), ch.rescanRows, touched.size(),
          deletes.size(), recompute);
      WrittenFragments w = touched.isEmpty()
          ? new WrittenFragments(List.of(), 0, null, List.of())
          : new SparkRefreshWrite(ctx, t, o).write(write, WriteTask.every(t, s.plain, o), 1);
      long t2 = System.currentTimeMillis();
      return QueryCommit.stage(ctx, t, s, w, deletes, false, String.format(
          "fragment diff %d ms, groups %d ms, write %d ms", ch.millis, t1 - t0, t2 - t1));
    } finally {
      if (merged != null) {
        merged.unpersist();
      }
      departed.destroy();
    }
  }

  /**
   * The rows that arrived (+1: the changed fragments at the target version) and that left (-1:
   * the departed rows, read at the watermark version from the fragments that held them).
   */
  private Dataset<Row> changeRows(AggregateState st, Dataset<Row> now, SourceChanges ch,
      StructType columns, List<Row> arrivedRows, DepartedRows.Picked picked,
      Broadcast<byte[]> departed) {
    Dataset<Row> arrived = st.changes(arrivedRows != null
        ? ctx.spark().createDataFrame(arrivedRows, columns)
        : FragmentScopedRead.restrict(now, new HashSet<>(ch.rescan)), 1);
    if (ch.departed.isEmpty()) {
      return arrived;
    }
    UserDefinedFunction in = functions.udf(new RowIdMembership(departed),
        DataTypes.BooleanType);
    Dataset<Row> left = DepartedRows.changes(ctx, picked, st, columns,
        () -> sourceAt(s.watermark), in.apply(functions.col("_rowid")));
    return arrived.unionByName(left);
  }

  /**
   * The source rows, at the target version, of the groups {@code merged} marks. Up to {@value
   * #PUSHED_GROUPS} groups are named by their keys in a filter, which the read hands to Lance
   * where Lance evaluates it as Spark does ({@code FaithfulFilters}): Lance then reads the key
   * columns of every row but the other columns of those groups' rows only. More groups are
   * found by a join with the whole source.
   */
  private Dataset<Row> recomputed(Dataset<Row> now, Dataset<Row> merged) {
    List<org.apache.spark.sql.Column> keys = new ArrayList<>();
    List<org.apache.spark.sql.Column> exprs = new ArrayList<>();
    List<SourceQuery.OutputColumn> groupBy = q.aggregation().groupBy();
    for (int j = 0; j < groupBy.size(); j++) {
      keys.add(functions.col("__g" + j));
      exprs.add(functions.expr(groupBy.get(j).expr()));
    }
    if (keys.isEmpty()) {
      return now;
    }
    Dataset<Row> marked = merged.where("__recompute")
        .select(keys.toArray(new org.apache.spark.sql.Column[0]));
    List<Row> groups = marked.limit(PUSHED_GROUPS + 1).collectAsList();
    if (groups.size() <= PUSHED_GROUPS && groups.stream().allMatch(AggregateAttempt::literals)) {
      org.apache.spark.sql.Column any = functions.lit(false);
      if (exprs.size() == 1) {
        List<Object> values = new ArrayList<>();
        boolean nulls = false;
        for (Row g : groups) {
          if (g.isNullAt(0)) {
            nulls = true;
          } else {
            values.add(g.get(0));
          }
        }
        any = values.isEmpty() ? any : exprs.get(0).isin(values.toArray());
        any = nulls ? any.or(exprs.get(0).isNull()) : any;
      } else {
        for (Row g : groups) {
          org.apache.spark.sql.Column all = functions.lit(true);
          for (int j = 0; j < exprs.size(); j++) {
            all = all.and(g.isNullAt(j) ? exprs.get(j).isNull()
                : exprs.get(j).equalTo(functions.lit(g.get(j))));
          }
          any = any.or(all);
        }
      }
      return now.where(any);
    }
    org.apache.spark.sql.Column on = functions.lit(true);
    List<org.apache.spark.sql.Column> keyed = new ArrayList<>();
    keyed.add(functions.col("*"));
    List<org.apache.spark.sql.Column> wanted = new ArrayList<>();
    for (int j = 0; j < exprs.size(); j++) {
      keyed.add(exprs.get(j).as("__sk" + j));
      wanted.add(functions.col("__g" + j).as("__rk" + j));
      on = on.and(functions.col("__sk" + j).eqNullSafe(functions.col("__rk" + j)));
    }
    Dataset<Row> rows = now.select(keyed.toArray(new org.apache.spark.sql.Column[0]))
        .join(marked.select(wanted.toArray(new org.apache.spark.sql.Column[0])), on,
            "left_semi");
    List<org.apache.spark.sql.Column> back = new ArrayList<>();
    for (String c : now.columns()) {
      back.add(functions.col(AggregateState.quoted(c)));
    }
    return rows.select(back.toArray(new org.apache.spark.sql.Column[0]));
  }

  /** Whether every key of {@code g} can be written as a literal (not a struct, array, map). */
  private static boolean literals(Row g) {
    for (int j = 0; j < g.length(); j++) {
      Object v = g.get(j);
      if (v instanceof Row || v instanceof scala.collection.Iterable<?>
          || v instanceof java.util.Map<?, ?>) {
        return false;
      }
    }
    return true;
  }

  private long driverRows() {
    return LocalRefreshWrite.conf(ctx.spark(), LocalRefreshWrite.MAX_ROWS_CONF,
        LocalRefreshWrite.DEFAULT_MAX_ROWS);
  }

  /**
   * The rows of the changed fragments at the target version, arriving, read on the driver when
   * they are at most {@value LocalRefreshWrite#MAX_ROWS_CONF} ({@link DriverRows}); {@code
   * null} when they are read by a Spark scan of those fragments instead.
   */
  private List<Row> arrivedRows(SourceChanges ch, StructType columns) {
    long max = driverRows();
    if (columns == null || max <= 0 || ch.rescanRows > max) {
      return null;
    }
    if (ch.rescan.isEmpty()) {
      return List.of();
    }
    try {
      return DriverRows.read(s.datasets.source(s.srcVersion),
          new ArrayList<>(new java.util.TreeSet<>(ch.rescan)), columns,
          false, x -> true);
    } catch (Exception e) {
      LOG.info("View {} (job {}): changed fragments not read on the driver ({}); reading "
          + "them in Spark", t.viewName(), ctx.jobId(), e.toString());
      return null;
    }
  }

  /**
   * The view's rows with their {@code _rowaddr} as a last column, at the version the refresh
   * read, when it has at most {@value LocalRefreshWrite#MAX_ROWS_CONF} rows; {@code null} when
   * they are read through lance-spark instead.
   */
  private List<Row> viewRows() {
    long max = driverRows();
    if (max <= 0 || s.viewRows > max) {
      return null;
    }
    try {
      return DriverRows.read(s.datasets.view(s.readVersion), null, s.target, true, x -> true);
    } catch (Exception e) {
      LOG.info("View {} (job {}): view rows not read on the driver ({}); reading them in "
          + "Spark", t.viewName(), ctx.jobId(), e.toString());
      return null;
    }
  }

  /** The view's rows with their {@code _rowaddr}: {@code rows} when read on the driver. */
  private Dataset<Row> view(List<Row> rows) {
    if (rows != null) {
      return ctx.spark().createDataFrame(rows, s.target.add("_rowaddr", DataTypes.LongType,
          false));
    }
    return LanceReads.load(ctx.spark(), t.view(), s.readVersion).select(viewColumns());
  }

  private org.apache.spark.sql.Column[] viewColumns() {
    List<org.apache.spark.sql.Column> cols = new ArrayList<>();
    cols.add(functions.col("_rowaddr"));
    for (String c : s.target.fieldNames()) {
      cols.add(functions.col(AggregateState.quoted(c)));
    }
    return cols.toArray(new org.apache.spark.sql.Column[0]);
  }

  @Override
  public RefreshPlan explain() {
    if (upToDate()) {
      return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY, RefreshPlan.Mode.NO_OP,
          "the view already reflects source version " + s.srcVersion, s.watermark,
          s.srcVersion, s.sourceFragments, List.of(), 0, s.viewRows, 0L, 0L,
          RefreshPlan.Write.NONE, null, "");
    }
    Long from = s.watermark == 0 ? null : s.watermark;
    Dataset<Row> now = sourceAt(s.srcVersion);
    AggregateState st = state(now);
    // The change set compares versions with the same columns: one set serves both sides.
    // Found only when a change set is applied (it analyses a plan).
    StructType[] read = new StructType[1];
    Plan plan = plan(() -> (read[0] = DepartedRows.columnsRead(st, now)) != null);
    StructType columns = read[0];
    SourceChanges ch = plan.changes();
    SparkRefreshWrite writes = new SparkRefreshWrite(ctx, t, o);
    if (ch == null) {
      long groups = st.totals(st.changes(now, 1)).count();
      String reason = s.rebuild != null ? s.rebuild : s.watermarkRemoved != null
          ? s.watermarkRemovedReason() : plan.rebuild();
      return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY, RefreshPlan.Mode.FULL,
          reason, from, s.srcVersion, s.sourceFragments, null, s.sourceRows, s.viewRows,
          s.viewRows, groups, RefreshPlan.Write.SPARK_JOB,
          writes.writeTasks(s.sourceFragments, 0), "aggregates every source row into "
              + groups + " groups");
    }
    List<Row> arrived = arrivedRows(ch, columns);
    DepartedRows.Picked picked = ch.departed.isEmpty()
        ? new DepartedRows.Picked(List.of(), java.util.Set.of())
        : DepartedRows.pick(ctx, t, s, ch, columns);
    List<Row> viewRows = viewRows();
    LocalAggregateRefresh.Merged local = arrived != null && picked.complete()
        && viewRows != null ? LocalAggregateRefresh.merge(ctx, t, s, st, q.aggregation(),
            new LocalAggregateRefresh.Inputs(columns, arrived, picked.rows(), viewRows)) : null;
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(ctx.spark().sparkContext());
    Broadcast<byte[]> departed = jsc.broadcast(RowIdSet.serialize(ch.departed));
    try {
      List<Row> touched = new ArrayList<>();
      if (local != null) {
        for (Row r : local.rows()) {
          touched.add(org.apache.spark.sql.RowFactory.create(r.get(r.length() - 1),
              r.get(r.length() - 2)));
        }
      } else {
        touched = st.merge(st.delta(changeRows(st, now, ch, columns, arrived, picked,
            departed)), view(viewRows)).select("__v_addr", "__recompute").collectAsList();
      }
      long inView = touched.stream().filter(r -> !r.isNullAt(0)).count();
      long recompute = touched.stream().filter(r -> r.getBoolean(1)).count();
      String reason = "source changed since version " + s.watermark + ": " + ch.diff + "; "
          + ch.departed.getLongCardinality() + " source rows left changed fragments; "
          + touched.size() + " groups touched (" + inView + " in the view, "
          + (touched.size() - inView) + " new), " + recompute + " recomputed from their rows";
      RefreshPlan.Write how = touched.isEmpty() ? RefreshPlan.Write.NONE : local != null
          ? RefreshPlan.Write.DRIVER : RefreshPlan.Write.SPARK_JOB;
      return new RefreshPlan(t.viewName(), MaterializedViewKind.QUERY,
          RefreshPlan.Mode.INCREMENTAL, reason, from, s.srcVersion, s.sourceFragments,
          ch.rescan, ch.rescanRows, s.viewRows, inView, (long) touched.size(), how,
          how == RefreshPlan.Write.SPARK_JOB ? 1 : null, recompute == 0 ? ""
              : "groups whose departing rows may have held their min or max, that HAVING hid, "
              + "or whose sum must be rebuilt are aggregated again from their rows in the "
              + "source");
    } finally {
      departed.destroy();
    }
  }
}
