package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.driver.CompiledDefinition;
import io.lancerest.spark.mv.driver.Declined;
import io.lancerest.spark.mv.driver.DriverScan;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.StructType;
import org.roaringbitmap.longlong.Roaring64NavigableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write phase of an incremental query refresh done on the driver, without a Spark job, when
 * the changed source fragments hold few rows.
 *
 * <p>A Spark job costs its planning, scheduling and task start even for a few thousand rows;
 * for the typical refresh (an append and an UPDATE since the watermark) that fixed cost is most
 * of the refresh. Here the Spark path's own optimized plan ({@link QueryLayout#project} over
 * the fragment-scoped lance-spark read, with lance-spark's column pruning and filter push-down
 * done) is compiled ({@link CompiledDefinition}) and run over the changed fragments read with
 * lance-core ({@link DriverScan}); each row is kept or not by the same rule as the write tasks,
 * and the new ones are written as uncommitted fragments: the caller commits them exactly as it
 * commits the tasks' fragments.
 *
 * <p>Whenever this cannot give the same rows as the Spark path for sure, it declines before
 * writing anything, and the caller runs the Spark path: see {@link CompiledDefinition} and
 * {@link DriverScan} for what they refuse, and the configured caps on rows and bytes.
 */
final class LocalRefreshWrite {
  private static final Logger LOG = LoggerFactory.getLogger(LocalRefreshWrite.class);
  /** Most rows in the changed source fragments for the driver path; 0 or less turns it off. */
  static final String MAX_ROWS_CONF = "spark.lancerest.mv.query.localRefreshMaxRows";
  static final long DEFAULT_MAX_ROWS = 262_144;
  /** Most bytes (Spark's row format) the driver holds of the rows read; then it declines. */
  static final String MAX_BYTES_CONF = "spark.lancerest.mv.query.localRefreshMaxBytes";
  static final long DEFAULT_MAX_BYTES = 64L << 20;

  private LocalRefreshWrite() {}

  /**
   * What the driver path did.
   *
   * @param written the fragments written, or {@code null} when it declined (nothing written)
   * @param why one line for the log: why it declined, or the rows it handled
   * @param phases read / project / write times, for the refresh's phases line
   */
  record Outcome(WrittenFragments written, String why, String phases) {
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
      List<Field> sourceFields, int maxRowsPerFile, org.lance.Dataset source, List<Integer> rescan,
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
    CompiledDefinition c;
    if (entry != null) {
      c = entry.compiled();
    } else {
      Dataset<Row> projected = sparkProjected.get();
      // Planning may have set confs (lance-spark's path catalog, on the first read of the
      // session): keep the plan under the key the next refresh will look for.
      key = CompiledPlans.key(spark, t, q, target, sourceFields);
      try {
        c = CompiledDefinition.of(projected.queryExecution().optimizedPlan());
        if (c.why() == null) {
          entry = CompiledPlans.entry(spark, q, projected.queryExecution().analyzed(), c);
        }
      } catch (Exception e) {
        return Outcome.declined("planning the definition on the driver failed ("
            + DriverScan.firstLine(e) + ")");
      }
      if (c.why() != null) {
        return Outcome.declined(c.why());
      }
    }
    try {
      return write(t, maxRowsPerFile, source, rescan, plain, target, inView, watermark,
          afterBatch, jobId, c, maxBytes, System.currentTimeMillis() - t0, reused);
    } finally {
      if (entry != null) {
        plans.giveBack(key, entry);
      }
    }
  }

  /** The read, projection and write of {@link #tryWrite} with the compiled definition. */
  private static Outcome write(ViewTables t, int maxRowsPerFile, org.lance.Dataset source,
      List<Integer> rescan, Schema plain, StructType target, Roaring64NavigableMap inView,
      long watermark, IntConsumer afterBatch, String jobId, CompiledDefinition c, long maxBytes,
      long planMs, boolean reused) {
    long t1 = System.currentTimeMillis();
    RowSink rows = new RowSink(inView, watermark, target.fields().length, maxBytes);
    DriverScan.Stats read;
    try {
      read = c.empty() ? new DriverScan.Stats(0, 0, 0) : DriverScan.scan(source, c, rescan, rows);
    } catch (Declined d) {
      return Outcome.declined(d.getMessage());
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      // Nothing was written: the Spark path reads the same fragments and reports what fails.
      return Outcome.declined("reading the changed fragments " + rescan + " on the driver "
          + "failed (" + DriverScan.firstLine(e) + ")");
    }
    long t2 = System.currentTimeMillis();

    FragmentShipping.Written w;
    try (BufferAllocator a = new RootAllocator()) {
      // column 0 is __source_row_id: its range per fragment is recorded with the commit
      // the same check as the Spark path's tasks (WriteTask)
      w = FragmentShipping.writeRows(t.view(), a, plain,
          VectorRows.checked(VectorRows.plan(c.output(), plain, t.viewName()),
              rows.toWrite.iterator()), maxRowsPerFile, () -> afterBatch.accept(-1), 0);
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new QueryRefreshException("Refresh of view " + t.viewName() + " (job " + jobId
          + ") failed while writing its new rows on the driver; nothing was committed, the "
          + "view is unchanged: " + e.getMessage(), e);
    }
    long t3 = System.currentTimeMillis();
    // read: opening the source version and the scan; project: filter, projection, keeping
    long projectMs = read.computeNanos() / 1_000_000;
    String phases = String.format("local plan %d ms%s, read %d ms, project %d ms, write %d ms",
        planMs, reused ? " (reused)" : "", t2 - t1 - projectMs, projectMs, t3 - t2);
    return new Outcome(new WrittenFragments(w.fragments(), w.rows(), rows.kept,
        w.ranges()), String.format("%d rows read, %d projected, %d kept, %d written (%d bytes) "
            + "in %d fragments", read.rowsRead(), read.rowsOut(),
            rows.kept.getLongCardinality(), w.rows(), rows.bytes, w.fragments().size()),
        phases);
  }

  /** Keeps each projected row (unchanged in the view) or copies it for the write. */
  private static final class RowSink implements DriverScan.RowHandler {
    private final Roaring64NavigableMap inView;
    private final long watermark;
    private final int updatedAt;
    private final long maxBytes;
    final Roaring64NavigableMap kept = Roaring64NavigableMap.bitmapOf();
    final List<InternalRow> toWrite = new ArrayList<>();
    long bytes;

    RowSink(Roaring64NavigableMap inView, long watermark, int updatedAt, long maxBytes) {
      this.inView = inView;
      this.watermark = watermark;
      this.updatedAt = updatedAt;
      this.maxBytes = maxBytes;
    }

    @Override
    public void accept(UnsafeRow out) {
      if (WriteTask.unchangedInView(inView, watermark, out, updatedAt)) {
        kept.addLong(out.getLong(0));
        return;
      }
      UnsafeRow copy = out.copy();
      bytes += copy.getSizeInBytes();
      toWrite.add(copy);
      if (bytes > maxBytes) {
        // checked per row: one batch of large values could hold far more
        throw new Declined("the rows to write exceed " + MAX_BYTES_CONF + " = " + maxBytes
            + " bytes");
      }
    }
  }

  static long conf(SparkSession spark, String key, long dflt) {
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
