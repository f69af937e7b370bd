package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.MaterializedViewException;
import io.lancerest.spark.mv.SourceQuery;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.rdd.RDD;
import scala.Option;
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
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
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
 * of the refresh. Here the Spark path's own analyzed plan ({@link QueryLayout#project} over the
 * lance-spark read) has its read swapped for an input of the same attributes, is optimized by
 * Spark, and its filter and projection are compiled into a predicate and an {@code
 * UnsafeProjection} (what Spark's FilterExec / ProjectExec run in tasks). The rows of the changed fragments are
 * read with lance-core, seen as Spark rows through lance-spark's own Arrow column vectors,
 * filtered and projected, kept or not by the same rule as the write tasks, and written as
 * uncommitted fragments: the caller commits them exactly as it commits the tasks' fragments.
 *
 * <p>(A {@code LocalRelation} of the rows would let the optimizer evaluate them itself, but it
 * does so with interpreted expressions and compares the whole relation between optimizer
 * iterations: about 10 times slower for 50,000 rows.)
 *
 * <p>Whenever this cannot give the same rows as the Spark path for sure, it declines before
 * writing anything, and the caller runs the Spark path: a column the definition reads that
 * lance-core does not give with the Spark type lance-spark gives, an optimized plan other than
 * a projection over an optional filter, an expression only a Spark job evaluates (a Python UDF,
 * a subquery), an expression failing on a row (the Spark path then reports it as usual), or
 * more rows or bytes than the configured caps.
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

  /** Tests: {@code "local"} or {@code "spark"}, the path the last write phase took. */
  static volatile String lastPath;

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
   * Writes the new view rows of {@code rescan} on the driver, or declines.
   *
   * @param sparkProjected the Spark path's projection of the changed fragments (its analyzed
   *     plan tells which source columns the definition reads, and their Spark types)
   * @param inView source row ids of changed fragments that have a view row
   */
  static Outcome tryWrite(SparkSession spark, QueryRefresh.Tables t, SourceQuery q,
      int maxRowsPerFile, long srcVersion, List<Integer> rescan, long rescanRows, Schema plain,
      StructType target, Dataset<Row> sparkProjected, Roaring64NavigableMap inView,
      long watermark, IntConsumer afterBatch, String jobId) {
    long maxRows = conf(spark, MAX_ROWS_CONF, DEFAULT_MAX_ROWS);
    if (maxRows <= 0) {
      return Outcome.declined(MAX_ROWS_CONF + " = " + maxRows + " turns it off");
    }
    if (rescanRows > maxRows) {
      return Outcome.declined(rescanRows + " rows in changed fragments > " + MAX_ROWS_CONF
          + " = " + maxRows);
    }
    long maxBytes = conf(spark, MAX_BYTES_CONF, DEFAULT_MAX_BYTES);
    long t0 = System.currentTimeMillis();
    // lance-spark hands the filter's simple comparisons to Lance, which evaluates them with
    // its own semantics and Spark does not check them again: the view must have exactly the
    // rows that read gives. Spark evaluates them here, which agrees only for some values.
    org.apache.spark.sql.sources.Filter[] pushed = FragmentScopedRead.pushedFilters(
        sparkProjected);
    if (pushed == null) {
      return Outcome.declined("the Spark path's plan has no fragment-scoped read");
    }
    for (org.apache.spark.sql.sources.Filter f : pushed) {
      if (!sameInLanceAndSpark(f)) {
        return Outcome.declined("the filter has a part lance-spark pushes down to Lance (" + f
            + ") whose result there may differ from Spark's; the Spark path reads it as the "
            + "view's other rows were read");
      }
    }
    // The Spark path's analyzed plan: its leaf is the lance-spark read, whose columns the
    // definition references are the ones to read, with the Spark types lance-spark gives them.
    LogicalPlan analyzed = sparkProjected.queryExecution().analyzed();
    LogicalPlan leaf = analyzed;
    while (leaf.children().size() == 1) {
      leaf = leaf.children().head();
    }
    if (!leaf.children().isEmpty()) {
      return Outcome.declined("the definition's plan is not a chain over one source ("
          + leaf.nodeName() + ")");
    }
    AttributeSet referenced = references(analyzed);
    List<Attribute> used = new ArrayList<>();
    for (Attribute a : JavaConverters.seqAsJavaList(leaf.output())) {
      if (referenced.contains(a)) {
        used.add(a);
      }
    }
    List<String> columns = new ArrayList<>();
    List<DataType> types = new ArrayList<>();
    for (Attribute a : used) {
      columns.add(a.name());
      types.add(a.dataType());
    }

    // the same analyzed projection and filter over an input of those columns, optimized by
    // Spark and compiled here as the Spark path's tasks compile them
    Compiled c;
    try {
      c = Compiled.of(spark, analyzed, leaf, used);
    } catch (Exception e) {
      return Outcome.declined("planning the definition on the driver failed ("
          + firstLine(e) + ")");
    }
    if (c.why != null) {
      return Outcome.declined(c.why);
    }
    long t1 = System.currentTimeMillis();

    int updatedAt = target.fields().length;
    Roaring64NavigableMap kept = Roaring64NavigableMap.bitmapOf();
    List<InternalRow> toWrite = new ArrayList<>();
    long read = 0;
    long projected = 0;
    long bytes = 0;
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
        ScanOptions so = new ScanOptions.Builder().fragmentIds(rescan).columns(columns)
            .batchSize(BATCH_ROWS).build();
        try (LanceScanner s = src.newScan(so); ArrowReader r = s.scanBatches()) {
          boolean checked = false;
          while (true) {
            if (!r.loadNextBatch()) {
              break;
            }
            long s1 = System.nanoTime();
            VectorSchemaRoot root = r.getVectorSchemaRoot();
            ColumnVector[] vectors = new ColumnVector[columns.size()];
            for (int i = 0; i < vectors.length; i++) {
              FieldVector v = root.getVector(columns.get(i));
              if (v == null) {
                return Outcome.declined("the lance-core scan gave no column " + columns.get(i));
              }
              if (!checked) {
                DataType got = LanceArrowUtils.fromArrowField(v.getField());
                if (!got.equals(types.get(i))) {
                  return Outcome.declined("column " + columns.get(i) + " reads as "
                      + got.simpleString() + " from lance-core but as "
                      + types.get(i).simpleString() + " through lance-spark");
                }
              }
              vectors[i] = new LanceArrowColumnVector(v);
            }
            checked = true;
            // not closed: the vectors belong to the reader
            ColumnarBatch batch = new ColumnarBatch(vectors, root.getRowCount());
            try {
              for (Iterator<InternalRow> it = batch.rowIterator(); it.hasNext(); ) {
                InternalRow in = it.next();
                read++;
                if (c.filter != null && !c.filter.eval(in)) {
                  continue;
                }
                UnsafeRow out = c.project.apply(in);
                projected++;
                if (QueryRefresh.WriteTask.unchangedInView(inView, watermark, out, updatedAt)) {
                  kept.addLong(out.getLong(0));
                } else {
                  UnsafeRow copy = out.copy();
                  bytes += copy.getSizeInBytes();
                  toWrite.add(copy);
                  if (bytes > maxBytes) {
                    // checked per row: one batch of large values could hold far more
                    return Outcome.declined("the rows to write exceed " + MAX_BYTES_CONF + " = "
                        + maxBytes + " bytes after " + read + " rows read");
                  }
                }
              }
            } catch (Exception e) {
              // (SparkException from a failing UDF is checked to javac, thrown all the same)
              // e.g. a UDF or an ANSI cast failing on a row: the Spark path computes the same
              // expressions and reports the failure as it always does
              return Outcome.declined("computing the rows on the driver failed ("
                  + firstLine(e) + ")");
            }
            projectNs += System.nanoTime() - s1;
          }
        }
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
          toWrite.iterator(), maxRowsPerFile, () -> afterBatch.accept(-1), 0);
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Refresh of view " + t.viewName() + " (job " + jobId
          + ") failed while writing its new rows on the driver; nothing was committed, the "
          + "view is unchanged: " + e.getMessage(), e);
    }
    long t3 = System.currentTimeMillis();
    // read: opening the source version and the scan; project: filter, projection, keeping
    String phases = String.format("local plan %d ms, read %d ms, project %d ms, write %d ms",
        t1 - t0, t2 - t1 - projectNs / 1_000_000, projectNs / 1_000_000, t3 - t2);
    return new Outcome(new QueryRefresh.Written(w.fragments(), w.rows(), kept, w.ranges()),
        String.format("%d rows read, %d projected, %d kept, %d written (%d bytes) in %d "
            + "fragments", read, projected, kept.getLongCardinality(), w.rows(), bytes,
            w.fragments().size()), phases);
  }

  /**
   * Whether Lance gives the same rows as Spark for a filter lance-spark pushes down: NULL
   * checks, and comparisons with integers, booleans, dates and plain strings. Not floating
   * point (Lance orders -0.0 below 0.0, Spark finds them equal), timestamps (lance-spark writes
   * them in the JVM's time zone), decimals or binary, nor strings that need escaping.
   */
  static boolean sameInLanceAndSpark(org.apache.spark.sql.sources.Filter f) {
    if (f instanceof org.apache.spark.sql.sources.IsNull
        || f instanceof org.apache.spark.sql.sources.IsNotNull) {
      return true;
    }
    if (f instanceof org.apache.spark.sql.sources.And a) {
      return sameInLanceAndSpark(a.left()) && sameInLanceAndSpark(a.right());
    }
    if (f instanceof org.apache.spark.sql.sources.Or o) {
      return sameInLanceAndSpark(o.left()) && sameInLanceAndSpark(o.right());
    }
    if (f instanceof org.apache.spark.sql.sources.Not n) {
      return sameInLanceAndSpark(n.child());
    }
    if (f instanceof org.apache.spark.sql.sources.In in) {
      for (Object v : in.values()) {
        if (!plainValue(v)) {
          return false;
        }
      }
      return true;
    }
    Object v;
    if (f instanceof org.apache.spark.sql.sources.EqualTo e) {
      v = e.value();
    } else if (f instanceof org.apache.spark.sql.sources.GreaterThan g) {
      v = g.value();
    } else if (f instanceof org.apache.spark.sql.sources.GreaterThanOrEqual g) {
      v = g.value();
    } else if (f instanceof org.apache.spark.sql.sources.LessThan l) {
      v = l.value();
    } else if (f instanceof org.apache.spark.sql.sources.LessThanOrEqual l) {
      v = l.value();
    } else {
      return false;
    }
    return plainValue(v);
  }

  private static boolean plainValue(Object v) {
    if (v instanceof String s) {
      return s.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7f && ch != '\'' && ch != '\\');
    }
    return v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
        || v instanceof Boolean || v instanceof java.sql.Date || v instanceof java.time.LocalDate;
  }

  private static String firstLine(Exception e) {
    return e.toString().lines().findFirst().orElse("");
  }

  /**
   * The optimized filter and projection of the definition's analyzed plan, evaluated over rows
   * of {@code input}, or why they cannot be evaluated on the driver.
   */
  private static final class Compiled {
    BasePredicate filter;
    UnsafeProjection project;
    /** The optimizer proved no row passes the filter. */
    boolean empty;
    String why;

    @SuppressWarnings("unchecked")
    static Compiled of(SparkSession spark, LogicalPlan analyzed, LogicalPlan leaf,
        List<Attribute> input) {
      Compiled c = new Compiled();
      // The lance-spark read is swapped for an input the optimizer knows nothing about and
      // pushes nothing into, with the same attributes: an empty RDD, never run. (Not a
      // LocalRelation of the rows: the optimizer would evaluate it itself, interpreted.)
      LogicalPlan rdd = new LogicalRDD(JavaConverters.asScalaBuffer(input).toSeq(),
          (RDD<InternalRow>) (RDD<?>) JavaSparkContext.fromSparkContext(spark.sparkContext())
              .emptyRDD().rdd(), new UnknownPartitioning(0),
          JavaConverters.asScalaBuffer(new ArrayList<SortOrder>()).toSeq(), false, spark,
          Option.empty(), Option.empty());
      LogicalPlan p = spark.sessionState().optimizer().execute(replaceLeaf(analyzed, leaf, rdd));
      if (p instanceof LocalRelation l && l.data().isEmpty()) {
        c.empty = true;
        return c;
      }
      if (!(p instanceof Project project)) {
        c.why = "the optimized definition is a " + p.nodeName() + ", not a projection";
        return c;
      }
      List<Expression> exprs = new ArrayList<>(
          (List<Expression>) (List<?>) JavaConverters.seqAsJavaList(project.projectList()));
      p = project.child();
      Expression condition = null;
      if (p instanceof Filter f) {
        condition = f.condition();
        p = f.child();
      }
      if (!(p instanceof LogicalRDD)) {
        c.why = "the optimized definition reads its input through a " + p.nodeName();
        return c;
      }
      for (Expression e : condition == null ? exprs : concat(exprs, condition)) {
        String bad = unevaluable(e);
        if (bad != null) {
          c.why = "the definition uses " + bad + ", which only a Spark job evaluates";
          return c;
        }
        if (!e.deterministic()) {
          // e.g. rand(), spark_partition_id(): their values depend on the task that runs them.
          // CREATE refuses them; a definition written by another client may still have one.
          c.why = "the definition has a non-deterministic expression (" + e.sql() + ")";
          return c;
        }
      }
      Seq<Attribute> in = p.output();
      if (condition != null) {
        c.filter = Predicate$.MODULE$.create(condition, in);
        c.filter.initialize(0);
      }
      c.project = UnsafeProjection.create(JavaConverters.asScalaBuffer(exprs).toSeq(), in);
      c.project.initialize(0);
      return c;
    }

    /** {@code plan} (a chain of one-child nodes) with {@code leaf} replaced by {@code by}. */
    private static LogicalPlan replaceLeaf(LogicalPlan plan, LogicalPlan leaf, LogicalPlan by) {
      if (plan == leaf) {
        return by;
      }
      LogicalPlan child = replaceLeaf(plan.children().head(), leaf, by);
      return (LogicalPlan) plan.withNewChildren(
          JavaConverters.asScalaBuffer(List.of(child)).toSeq());
    }

    private static List<Expression> concat(List<Expression> a, Expression b) {
      List<Expression> out = new ArrayList<>(a);
      out.add(b);
      return out;
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

  /** The attributes any node of {@code plan} references. */
  private static AttributeSet references(LogicalPlan plan) {
    AttributeSet out = plan.references();
    for (LogicalPlan c : JavaConverters.seqAsJavaList(plan.children())) {
      out = out.$plus$plus(references(c));
    }
    return out;
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
