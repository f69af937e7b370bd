package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.MaterializedViewException;
import io.lancerest.spark.mv.SourceQuery;
import io.lancerest.spark.mv.commit.FragmentShipping;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
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
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.execution.LocalTableScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
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

/**
 * The write phase of an incremental query refresh done on the driver, without a Spark job, when
 * the changed source fragments hold few rows.
 *
 * <p>A Spark job costs its planning, scheduling and task start even for a few thousand rows;
 * for the typical refresh (an append and an UPDATE since the watermark) that fixed cost is most
 * of the refresh. Here the rows of the changed fragments are read with lance-core, converted to
 * Spark rows with lance-spark's own Arrow mapping, and put in a {@link LocalRelation}; the
 * definition's projection and filter are applied to it exactly as on the Spark path ({@link
 * QueryLayout#project}), and Spark's optimizer folds them into the relation on the driver
 * (rule {@code ConvertToLocalRelation}), so the executed plan is a local table scan that runs no
 * job. The rows are filtered by the same keeping rule as the write tasks and written as
 * uncommitted fragments: the caller commits them exactly as it commits the tasks' fragments.
 *
 * <p>Whenever this cannot give the same rows as the Spark path for sure, it declines before
 * writing anything, and the caller runs the Spark path: a column the definition reads that
 * lance-core does not give with the Spark type lance-spark gives, a plan the optimizer cannot
 * fold (e.g. a Python UDF, a subquery), or more rows or bytes than the configured caps.
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
    // the source columns the definition reads, with the types the Spark path reads them as
    Map<String, Attribute> used = new LinkedHashMap<>();
    collectReferences(sparkProjected.queryExecution().analyzed(), used);
    List<String> columns = new ArrayList<>();
    List<StructField> fields = new ArrayList<>();
    for (Attribute a : used.values()) {
      columns.add(a.name());
      fields.add(DataTypes.createStructField(a.name(), a.dataType(), a.nullable()));
    }
    StructType schema = DataTypes.createStructType(fields);

    List<InternalRow> rows = new ArrayList<>();
    long bytes = 0;
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset src = QueryRefresh.open(a, t.sourceUri(), t.sourceStorageOptions(),
            srcVersion, "source table")) {
      Map<String, Integer> dataFields = new HashMap<>();
      for (var f : src.getSchema().getFields()) {
        dataFields.put(f.getName(), 0);
      }
      for (String c : columns) {
        if (!dataFields.containsKey(c) && !META.contains(c)) {
          return Outcome.declined("the definition reads column " + c + ", which lance-core "
              + "does not give by name");
        }
      }
      ScanOptions so = new ScanOptions.Builder().fragmentIds(rescan).columns(columns)
          .batchSize(BATCH_ROWS).build();
      UnsafeProjection toUnsafe = UnsafeProjection.create(schema);
      try (LanceScanner s = src.newScan(so); ArrowReader r = s.scanBatches()) {
        boolean checked = false;
        while (r.loadNextBatch()) {
          VectorSchemaRoot root = r.getVectorSchemaRoot();
          ColumnVector[] vectors = new ColumnVector[columns.size()];
          for (int i = 0; i < vectors.length; i++) {
            FieldVector v = root.getVector(columns.get(i));
            if (v == null) {
              return Outcome.declined("the lance-core scan gave no column " + columns.get(i));
            }
            if (!checked) {
              DataType got = LanceArrowUtils.fromArrowField(v.getField());
              if (!got.equals(fields.get(i).dataType())) {
                return Outcome.declined("column " + columns.get(i) + " reads as " + got
                    .simpleString() + " from lance-core but as " + fields.get(i).dataType()
                    .simpleString() + " through lance-spark");
              }
            }
            vectors[i] = new LanceArrowColumnVector(v);
          }
          checked = true;
          // not closed: the vectors belong to the reader
          ColumnarBatch batch = new ColumnarBatch(vectors, root.getRowCount());
          for (Iterator<InternalRow> it = batch.rowIterator(); it.hasNext(); ) {
            UnsafeRow u = toUnsafe.apply(it.next()).copy();
            bytes += u.getSizeInBytes();
            rows.add(u);
          }
          if (bytes > maxBytes) {
            return Outcome.declined("the rows read exceed " + MAX_BYTES_CONF + " = " + maxBytes
                + " bytes after " + rows.size() + " rows");
          }
        }
      }
    } catch (QueryRefreshException e) {
      throw e;
    } catch (Exception e) {
      throw new QueryRefreshException("Cannot read the changed fragments " + rescan + " of the "
          + "source of view " + t.viewName() + " at version " + srcVersion + ": "
          + e.getMessage(), e);
    }
    long t1 = System.currentTimeMillis();

    // the same projection and filter as the Spark path, over the rows read
    List<Attribute> attrs = new ArrayList<>(JavaConverters.seqAsJavaList(
        DataTypeUtils.toAttributes(schema)));
    LocalRelation relation = new LocalRelation(JavaConverters.asScalaBuffer(attrs).toSeq(),
        JavaConverters.asScalaBuffer(rows).toSeq(), false);
    InternalRow[] projected;
    try {
      Dataset<Row> local = QueryLayout.project(Dataset.ofRows(spark, relation), q, target,
          t.viewName(), functions.col(UPDATED_AT));
      // the optimizer evaluates the projection and filter here, when it can
      SparkPlan plan = local.queryExecution().executedPlan();
      if (!(plan instanceof LocalTableScanExec scan)) {
        return Outcome.declined("the definition does not evaluate on the driver (plan "
            + plan.nodeName() + ")");
      }
      projected = (InternalRow[]) scan.executeCollect();
    } catch (Exception e) {
      // (SparkException from a failing UDF is checked to javac, thrown by Scala all the same)
      // e.g. a UDF or an ANSI cast failing on a row: the Spark path reports it as it always
      // does (and fails the same way, as it computes the same expressions)
      return Outcome.declined("computing the rows on the driver failed ("
          + e.toString().lines().findFirst().orElse("") + ")");
    }
    long read = rows.size();
    long t2 = System.currentTimeMillis();

    int updatedAt = target.fields().length;
    Roaring64NavigableMap kept = Roaring64NavigableMap.bitmapOf();
    List<InternalRow> toWrite = new ArrayList<>(projected.length);
    for (InternalRow r : projected) {
      if (QueryRefresh.WriteTask.unchangedInView(inView, watermark, r, updatedAt)) {
        kept.addLong(r.getLong(0));
      } else {
        toWrite.add(r);
      }
    }
    FragmentShipping.Written w;
    try (BufferAllocator a = new RootAllocator()) {
      w = FragmentShipping.writeRows(t.viewUri(), t.viewStorageOptions(), a, plain,
          toWrite.iterator(), maxRowsPerFile, () -> afterBatch.accept(-1));
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Refresh of view " + t.viewName() + " (job " + jobId
          + ") failed while writing its new rows on the driver; nothing was committed, the "
          + "view is unchanged: " + e.getMessage(), e);
    }
    long t3 = System.currentTimeMillis();
    String phases = String.format("local read %d ms, project %d ms, write %d ms", t1 - t0,
        t2 - t1, t3 - t2);
    return new Outcome(new QueryRefresh.Written(w.fragments(), w.rows(), kept),
        String.format("%d rows read (%d bytes), %d projected, %d kept, %d written in %d "
            + "fragments", read, bytes, projected.length, kept.getLongCardinality(), w.rows(), w.fragments().size()),
        phases);
  }

  /** Attributes any node of {@code plan} references, by name (source columns, in plan order). */
  private static void collectReferences(LogicalPlan plan, Map<String, Attribute> out) {
    for (Attribute a : JavaConverters.seqAsJavaList(plan.references().toSeq())) {
      out.putIfAbsent(a.name(), a);
    }
    for (LogicalPlan c : JavaConverters.seqAsJavaList(plan.children())) {
      collectReferences(c, out);
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
