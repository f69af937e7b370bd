package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.read.FragmentHazard;
import io.lancerest.spark.connector.read.SafeLanceScan;
import io.lancerest.spark.connector.read.TableFragments;
import io.lancerest.spark.mv.MaterializedViewException;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.SourceQuery;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.catalyst.expressions.Unevaluable;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.spark.vectorized.LanceArrowColumnVector;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * The write phase of an incremental query refresh done on the driver, without a Spark job, when
 * the changed source fragments hold few rows.
 *
 * <p>A Spark job costs its planning, scheduling and task start even for a few thousand rows;
 * for the typical refresh (an append and an UPDATE since the watermark) that fixed cost is most
 * of the refresh. Here the Spark path's own optimized plan ({@link QueryLayout#project} over
 * the fragment-scoped lance-spark read, with lance-spark's column pruning and filter push-down
 * done) is compiled: its filters into predicates and its projections into {@code
 * UnsafeProjection}s, over the columns the lance-spark scan reads (what Spark's FilterExec /
 * ProjectExec run in tasks). The rows of the changed fragments are read with lance-core, handed
 * the very SQL filter lance-spark hands Lance for the filter parts it pushes down (Lance
 * evaluates those with its own semantics, e.g. it orders -0.0 below 0.0, and Spark never checks
 * them again), seen as Spark rows through lance-spark's own Arrow column vectors, filtered and
 * projected, kept or not by the same rule as the write tasks, and written as uncommitted
 * fragments: the caller commits them exactly as it commits the tasks' fragments.
 *
 * <p>Whenever this cannot give the same rows as the Spark path for sure, it declines before
 * writing anything, and the caller runs the Spark path: a column the definition reads that
 * lance-core does not give with the Spark type lance-spark gives, an optimized plan other than
 * projections and filters over the lance-spark scan, a pushed filter on a metadata column
 * (lance-spark scans fragment by fragment, the driver the dataset), an expression only a Spark
 * job evaluates (a Python UDF, a subquery), an expression failing on a row (the Spark path
 * then reports it as usual), or more rows or bytes than the configured caps.
 */
final class LocalRefreshWrite {
  private static final Logger LOG = LoggerFactory.getLogger(LocalRefreshWrite.class);
  /** Most rows in the changed source fragments for the driver path; 0 or less turns it off. */
  static final String MAX_ROWS_CONF = "spark.lancerest.mv.query.localRefreshMaxRows";
  static final long DEFAULT_MAX_ROWS = 262_144;
  /** Most bytes (Spark's row format) the driver holds of the rows read; then it declines. */
  static final String MAX_BYTES_CONF = "spark.lancerest.mv.query.localRefreshMaxBytes";
  static final long DEFAULT_MAX_BYTES = 64L << 20;
  static final String UPDATED_AT = "_row_last_updated_at_version";
  /** Metadata columns lance-core returns by name, as lance-spark asks it to. */
  private static final List<String> META = List.of("_rowid", "_rowaddr", UPDATED_AT,
      "_row_created_at_version");
  private static final int BATCH_ROWS = 8192;

  private LocalRefreshWrite() {}

  /**
   * What the driver path did.
   *
   * @param written the fragments written, or {@code null} when it declined (nothing written)
   * @param why one line for the log: why it declined, or the rows it handled
   * @param phases read / project / write times, for the refresh's phases line
   */
  record Outcome(QueryRefresh.Written written, String why, String phases) {
    static Outcome declined(String why) {
      return new Outcome(null, why, "");
    }
  }

  /**
   * Why a write of {@code rescanRows} changed rows would not run on the driver whatever the
   * definition ({@link #MAX_ROWS_CONF} off or exceeded), or {@code null} when it may.
   */
  static String declines(SparkSession spark, long rescanRows) {
    long maxRows = conf(spark, MAX_ROWS_CONF, DEFAULT_MAX_ROWS);
    if (maxRows <= 0) {
      return MAX_ROWS_CONF + " = " + maxRows + " turns it off";
    }
    if (rescanRows > maxRows) {
      return rescanRows + " rows in changed fragments > " + MAX_ROWS_CONF + " = " + maxRows;
    }
    return null;
  }

  /**
   * Writes the new view rows of {@code rescan} on the driver, or declines.
   *
   * @param sparkProjected the Spark path's projection of the changed fragments: its optimized
   *     plan is what the driver compiles, its scan tells which columns to read, with which
   *     Spark types, and which filter Lance applies
   * @param inView source row ids of changed fragments that have a view row the write may keep
   *     (not those the source's history says were changed in place)
   */
  static Outcome tryWrite(SparkSession spark, ViewTables t, SourceQuery q,
      List<Field> sourceFields, int maxRowsPerFile, long srcVersion, List<Integer> rescan,
      long rescanRows, Schema plain, StructType target, Supplier<Dataset<Row>> sparkProjected,
      Roaring64NavigableMap inView, long watermark, IntConsumer afterBatch, String jobId,
      RefreshListener listener, CompiledPlans plans) {
    String capped = declines(spark, rescanRows);
    if (capped != null) {
      return Outcome.declined(capped);
    }
    long maxBytes = conf(spark, MAX_BYTES_CONF, DEFAULT_MAX_BYTES);
    long t0 = System.currentTimeMillis();
    // The Spark path's own optimized plan: its scan is lance-spark's, with the filter parts
    // lance-spark pushed down to Lance (evaluated there with Lance's semantics, e.g. -0.0 <
    // 0.0, and not checked again by Spark) and the columns it reads. The driver hands Lance the
    // same filter and evaluates the rest as the Spark path's tasks do. (Planned once: the Spark
    // path, if this declines, runs the same QueryExecution.) The previous refresh's compiled
    // plan is reused when nothing it depends on changed (CompiledPlans).
    CompiledPlans.Key key = CompiledPlans.key(spark, t, q, target, sourceFields);
    CompiledPlans.Entry entry = plans.take(spark, key);
    boolean reused = entry != null;
    listener.observe(RefreshListener.Probe.PLAN_COMPILED, !reused);
    Compiled c;
    if (entry != null) {
      c = entry.compiled();
    } else {
      Dataset<Row> projected = sparkProjected.get();
      // Planning may have set confs (lance-spark's path catalog, on the first read of the
      // session): keep the plan under the key the next refresh will look for.
      key = CompiledPlans.key(spark, t, q, target, sourceFields);
      try {
        c = Compiled.of(projected.queryExecution().optimizedPlan());
        if (c.why == null) {
          entry = CompiledPlans.entry(spark, q, projected.queryExecution().analyzed(), c);
        }
      } catch (Exception e) {
        return Outcome.declined("planning the definition on the driver failed ("
            + firstLine(e) + ")");
      }
      if (c.why != null) {
        return Outcome.declined(c.why);
      }
    }
    try {
      return write(t, maxRowsPerFile, srcVersion, rescan, plain, target, inView, watermark,
          afterBatch, jobId, c, maxBytes, System.currentTimeMillis() - t0, reused);
    } finally {
      if (entry != null) {
        plans.giveBack(key, entry);
      }
    }
  }

  /** The read, projection and write of {@link #tryWrite} with the compiled definition. */
  private static Outcome write(ViewTables t, int maxRowsPerFile, long srcVersion,
      List<Integer> rescan, Schema plain, StructType target, Roaring64NavigableMap inView,
      long watermark, IntConsumer afterBatch, String jobId, Compiled c, long maxBytes,
      long planMs, boolean reused) {
    List<String> columns = new ArrayList<>();
    List<DataType> types = new ArrayList<>();
    for (Attribute a : c.input) {
      columns.add(a.name());
      types.add(a.dataType());
    }
    long t1 = System.currentTimeMillis();

    RowSink rows = new RowSink(c, inView, watermark, target.fields().length, maxBytes);
    long projectNs = 0;
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset src = c.empty ? null : QueryRefresh.open(a, t.sourceUri(),
            t.sourceStorageOptions(), srcVersion, "source table")) {
      if (src != null) {
        Map<String, org.apache.arrow.vector.types.pojo.Field> dataFields = new HashMap<>();
        for (var f : src.getSchema().getFields()) {
          dataFields.put(f.getName(), f);
        }
        for (String col : columns) {
          var f = dataFields.get(col);
          if (f == null && !META.contains(col)) {
            return Outcome.declined("the definition reads column " + col + ", which lance-core "
                + "does not give by name");
          }
          if (f != null && f.getMetadata() != null
              && f.getMetadata().containsKey(LanceArrowUtils.ENCODING_BLOB())) {
            // lance-spark reads blob columns its own way (descriptors, not the bytes)
            return Outcome.declined("the definition reads blob column " + col);
          }
        }
        if (c.lanceFilter != null && !c.lanceFilterAlsoInStages) {
          // Fragments lance-core must not filter (rewritten by a compaction, FragmentHazard)
          // are read unfiltered; that is only right when the compiled stages evaluate the
          // pushed filters too, which a plan compiled before the compaction does not.
          TableFragments hz = TableFragments.of(src);
          if (hz.hazard(rescan) == FragmentHazard.REWRITTEN_ROW_IDS) {
            return Outcome.declined("changed fragments " + hz.with(
                FragmentHazard.REWRITTEN_ROW_IDS) + " were rewritten by a compaction, and the "
                + "compiled definition leaves its filter to Lance");
          }
        }
        // No scalar index: lance-spark scans fragment by fragment and evaluates the filter on
        // every row; an index (possibly covering only some fragments) must not decide here.
        SafeLanceScan.Request req = SafeLanceScan.Request.of(rescan, columns)
            .withFilter(c.lanceFilter).withBatchSize(BATCH_ROWS).withoutScalarIndex();
        boolean[] checked = {false};
        long[] project = {0};
        try {
          SafeLanceScan.scan(src, req, b -> {
            long s1 = System.nanoTime();
            ColumnVector[] vectors = new ColumnVector[columns.size()];
            for (int i = 0; i < vectors.length; i++) {
              if (columns.get(i).equals("_rowid")) {
                vectors[i] = b.rowIdColumn();
                continue;
              }
              FieldVector v = b.column(columns.get(i));
              if (v == null) {
                throw new Declined("the lance-core scan gave no column " + columns.get(i));
              }
              if (!checked[0]) {
                DataType got = LanceArrowUtils.fromArrowField(v.getField());
                if (!got.equals(types.get(i))) {
                  throw new Declined("column " + columns.get(i) + " reads as "
                      + got.simpleString() + " from lance-core but as "
                      + types.get(i).simpleString() + " through lance-spark");
                }
              }
              vectors[i] = new LanceArrowColumnVector(v);
            }
            checked[0] = true;
            // not closed: the vectors belong to the reader
            ColumnarBatch batch = new ColumnarBatch(vectors, b.rowCount());
            try {
              int n = batch.numRows();
              for (int i = 0; i < n; i++) {
                if (!rows.accept(batch.getRow(i))) {
                  // checked per row: one batch of large values could hold far more
                  throw new Declined("the rows to write exceed " + MAX_BYTES_CONF + " = "
                      + maxBytes + " bytes after " + rows.read + " rows read");
                }
              }
            } catch (Declined d) {
              throw d;
            } catch (Exception e) {
              // (SparkException from a failing UDF is checked to javac, thrown all the same)
              // e.g. a UDF or an ANSI cast failing on a row: the Spark path computes the same
              // expressions and reports the failure as it always does
              throw new Declined("computing the rows on the driver failed (" + firstLine(e)
                  + ")");
            }
            project[0] += System.nanoTime() - s1;
          });
        } catch (Declined d) {
          return Outcome.declined(d.getMessage());
        }
        projectNs = project[0];
      }
    } catch (QueryRefreshException e) {
      throw e;
    } catch (Exception e) {
      // Nothing was written: the Spark path reads the same fragments and reports what fails.
      return Outcome.declined("reading the changed fragments " + rescan + " on the driver "
          + "failed (" + firstLine(e) + ")");
    }
    long t2 = System.currentTimeMillis();

    FragmentShipping.Written w;
    try (BufferAllocator a = new RootAllocator()) {
      // column 0 is __source_row_id: its range per fragment is recorded with the commit
      w = FragmentShipping.writeRows(t.viewUri(), t.viewStorageOptions(), a, plain,
          rows.toWrite.iterator(), maxRowsPerFile, () -> afterBatch.accept(-1), 0);
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Refresh of view " + t.viewName() + " (job " + jobId
          + ") failed while writing its new rows on the driver; nothing was committed, the "
          + "view is unchanged: " + e.getMessage(), e);
    }
    long t3 = System.currentTimeMillis();
    // read: opening the source version and the scan; project: filter, projection, keeping
    String phases = String.format("local plan %d ms%s, read %d ms, project %d ms, write %d ms",
        planMs, reused ? " (reused)" : "", t2 - t1 - projectNs / 1_000_000,
        projectNs / 1_000_000, t3 - t2);
    return new Outcome(new QueryRefresh.Written(w.fragments(), w.rows(), rows.kept,
        w.ranges()), String.format("%d rows read, %d projected, %d kept, %d written (%d bytes) "
            + "in %d fragments", rows.read, rows.projected, rows.kept.getLongCardinality(),
            w.rows(), rows.bytes,
            w.fragments().size()), phases);
  }

  /**
   * Takes the scanned rows one at a time: filters and projects each with the compiled stages,
   * then keeps it (unchanged in the view) or copies it for the write.
   *
   * <p>A method per row, not a loop body: the JIT compiles a method called for every row
   * within the first refresh, while the read loop, run once per refresh, is compiled only
   * after several refreshes (and again after each deoptimization); until then every call in
   * its body runs interpreted, several times slower (docs/benchmarks.md).
   */
  private static final class RowSink {
    private final Compiled.Stage[] stages;
    private final Roaring64NavigableMap inView;
    private final long watermark;
    private final int updatedAt;
    private final long maxBytes;
    final Roaring64NavigableMap kept = Roaring64NavigableMap.bitmapOf();
    final List<InternalRow> toWrite = new ArrayList<>();
    long read;
    long projected;
    long bytes;

    RowSink(Compiled c, Roaring64NavigableMap inView, long watermark, int updatedAt,
        long maxBytes) {
      this.stages = c.stages.toArray(new Compiled.Stage[0]);
      this.inView = inView;
      this.watermark = watermark;
      this.updatedAt = updatedAt;
      this.maxBytes = maxBytes;
    }

    /** Takes one row; {@code false} when the rows to write now exceed the byte cap. */
    boolean accept(InternalRow in) {
      read++;
      InternalRow row = in;
      for (Compiled.Stage st : stages) {
        if (st.filter() != null) {
          if (!st.filter().eval(row)) {
            return true;
          }
        } else {
          row = st.project().apply(row);
        }
      }
      // the top stage is a projection (Compiled.of checks it)
      UnsafeRow out = (UnsafeRow) row;
      projected++;
      if (QueryRefresh.WriteTask.unchangedInView(inView, watermark, out, updatedAt)) {
        kept.addLong(out.getLong(0));
        return true;
      }
      UnsafeRow copy = out.copy();
      bytes += copy.getSizeInBytes();
      toWrite.add(copy);
      return bytes <= maxBytes;
    }
  }

  /** Why the driver path stops, thrown out of the scan's batch handler. */
  private static final class Declined extends RuntimeException {
    Declined(String why) {
      super(why, null, false, false);
    }
  }

  private static String firstLine(Exception e) {
    return e.toString().lines().findFirst().orElse("");
  }

  /**
   * The Spark path's optimized plan, a chain of projections and filters over the lance-spark
   * scan, compiled to run over rows of the scan's columns, or why it cannot run on the driver.
   */
  static final class Compiled {
    /** A filter or a projection, bound to the output of the stage below. */
    record Stage(BasePredicate filter, UnsafeProjection project) {}

    /** Bottom-up: the first stage takes the scan's rows; the last is a projection. */
    final List<Stage> stages = new ArrayList<>();
    /** The scan's output: the columns lance-spark reads, in order. */
    List<Attribute> input = List.of();
    /** The SQL filter lance-spark gives Lance for the scan, or {@code null}. */
    String lanceFilter;
    /** Whether the stages evaluate the pushed filters too (they came back from the scan). */
    boolean lanceFilterAlsoInStages;
    /** The optimizer proved no row passes the filter. */
    boolean empty;
    String why;

    @SuppressWarnings("unchecked")
    static Compiled of(LogicalPlan optimized) {
      Compiled c = new Compiled();
      if (optimized instanceof LocalRelation l && l.data().isEmpty()) {
        c.empty = true;
        return c;
      }
      if (!(optimized instanceof Project)) {
        c.why = "the optimized definition is a " + optimized.nodeName() + ", not a projection";
        return c;
      }
      List<LogicalPlan> chain = new ArrayList<>();
      LogicalPlan p = optimized;
      while (p instanceof Project || p instanceof Filter) {
        chain.add(p);
        p = p.children().head();
      }
      if (!(p instanceof DataSourceV2ScanRelation scan)) {
        c.why = "the optimized definition reads its input through a " + p.nodeName();
        return c;
      }
      FragmentScopedRead.LanceRead lance = FragmentScopedRead.lanceRead(scan.scan());
      if (lance == null) {
        c.why = "the Spark path's plan has no fragment-scoped read";
        return c;
      }
      for (org.apache.spark.sql.sources.Filter f : lance.pushed()) {
        for (String col : f.references()) {
          if (META.contains(col) || col.startsWith("_fragid")) {
            // lance-spark scans each fragment on its own, the driver scans the dataset: a
            // filter on row addresses or ids may not match the same rows in both
            c.why = "lance-spark pushes a filter on metadata column " + col + " (" + f + ")";
            return c;
          }
        }
      }
      c.lanceFilter = lance.where();
      c.lanceFilterAlsoInStages = lance.alsoBySpark();
      c.input = new ArrayList<>(JavaConverters.seqAsJavaList(scan.output()));
      if (c.input.isEmpty()) {
        // lance-spark then asks lance-core for row ids only; the definition always reads some
        c.why = "the lance-spark scan reads no column";
        return c;
      }
      // NULL checks mean the same in Lance and in Spark, and Spark infers IS NOT NULL for
      // most filters: when they are all Lance would get, evaluate them here instead, which
      // spares Lance's filtered scan, slower than the unfiltered one (docs/benchmarks.md).
      Expression nullChecks = nullChecksOnly(lance.pushed(), c.input);
      if (nullChecks != null) {
        c.lanceFilter = null;
        BasePredicate pred = Predicate$.MODULE$.create(nullChecks,
            JavaConverters.asScalaBuffer(c.input).toSeq());
        pred.initialize(0);
        c.stages.add(new Stage(pred, null));
      }
      for (int i = chain.size() - 1; i >= 0; i--) {
        LogicalPlan node = chain.get(i);
        List<Expression> exprs = node instanceof Project project
            ? (List<Expression>) (List<?>) JavaConverters.seqAsJavaList(project.projectList())
            : List.of(((Filter) node).condition());
        for (Expression e : exprs) {
          String bad = unevaluable(e);
          if (bad != null) {
            c.why = "the definition uses " + bad + ", which only a Spark job evaluates";
            return c;
          }
          if (!e.deterministic()) {
            // e.g. rand(), spark_partition_id(): their values depend on the task that runs
            // them. CREATE refuses them; a definition written by another client may still
            // have one.
            c.why = "the definition has a non-deterministic expression (" + e.sql() + ")";
            return c;
          }
        }
        Seq<Attribute> in = node.children().head().output();
        if (node instanceof Filter) {
          BasePredicate pred = Predicate$.MODULE$.create(exprs.get(0), in);
          pred.initialize(0);
          c.stages.add(new Stage(pred, null));
        } else {
          UnsafeProjection proj = UnsafeProjection.create(
              JavaConverters.asScalaBuffer(exprs).toSeq(), in);
          proj.initialize(0);
          c.stages.add(new Stage(null, proj));
        }
      }
      return c;
    }

    /**
     * The pushed filters as one Spark expression over {@code input} when every one is a NULL
     * check of a top-level column; otherwise (or when nothing is pushed) {@code null}.
     */
    private static Expression nullChecksOnly(org.apache.spark.sql.sources.Filter[] pushed,
        List<Attribute> input) {
      Expression all = null;
      for (org.apache.spark.sql.sources.Filter f : pushed) {
        String col;
        boolean isNull;
        if (f instanceof org.apache.spark.sql.sources.IsNotNull n) {
          col = n.attribute();
          isNull = false;
        } else if (f instanceof org.apache.spark.sql.sources.IsNull n) {
          col = n.attribute();
          isNull = true;
        } else {
          return null;
        }
        Attribute a = input.stream().filter(x -> x.name().equals(col)).findFirst().orElse(null);
        if (a == null) {
          return null; // e.g. a nested field "s.a": left to Lance
        }
        Expression check = isNull
            ? new org.apache.spark.sql.catalyst.expressions.IsNull(a)
            : new org.apache.spark.sql.catalyst.expressions.IsNotNull(a);
        all = all == null ? check : new org.apache.spark.sql.catalyst.expressions.And(all, check);
      }
      return all;
    }

    /** The first expression in {@code e} that cannot be evaluated as is (a Python UDF...). */
    private static String unevaluable(Expression e) {
      if (e instanceof Unevaluable && !(e instanceof AttributeReference)) {
        return e.prettyName();
      }
      for (Expression c : JavaConverters.seqAsJavaList(e.children())) {
        String bad = unevaluable(c);
        if (bad != null) {
          return bad;
        }
      }
      return null;
    }
  }

  private static long conf(SparkSession spark, String key, long dflt) {
    String v = spark.conf().get(key, null);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    try {
      return key.equals(MAX_BYTES_CONF) ? JavaUtils.byteStringAsBytes(v.trim())
          : Long.parseLong(v.trim());
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Spark conf " + key + " = '" + v + "' is not a "
          + (key.equals(MAX_BYTES_CONF) ? "size (e.g. 67108864 or 64m)" : "number of rows")
          + ": " + e.getMessage());
    }
  }
}
