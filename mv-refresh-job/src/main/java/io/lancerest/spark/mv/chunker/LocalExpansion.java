package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.driver.CompiledDefinition;
import io.lancerest.spark.mv.driver.Declined;
import io.lancerest.spark.mv.driver.DriverScan;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.refresh.RefreshContext;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The expansion of a small incremental chunker refresh run on the driver, without a Spark job.
 *
 * <p>A Spark job's planning, scheduling and task start cost about a tenth of a second however
 * few parents it expands, most of a typical incremental refresh (an append and a few edits
 * since the last one). When few parents are to be expanded, the Spark path's own input ({@link
 * ChunkerRefresh#project} over the changed fragments) is compiled and read on the driver ({@link
 * DriverScan}), and the same {@link ChunkerTask} the executors run expands it there: its
 * fragments, ranges, counts and skipped parents are committed exactly as a Spark task's.
 *
 * <p>It declines, with nothing kept, and the Spark path runs instead: when the definition
 * cannot run on the driver as the Spark path runs it, when the parents or their bytes exceed
 * the caps, or when the chunker takes longer than {@link #MAX_MILLIS_CONF} (a function that
 * is slow per parent belongs on executors; the view is then expanded by Spark for the rest of
 * the catalog's life, without trying the driver again).
 */
final class LocalExpansion {
  /** Most parents to expand on the driver; 0 turns the driver path off. */
  static final String MAX_PARENTS_CONF = "spark.lancerest.mv.chunker.localRefreshMaxParents";
  static final long DEFAULT_MAX_PARENTS = 16_384;
  /** Most bytes (Spark's row format) of the parents the driver holds. */
  static final String MAX_BYTES_CONF = "spark.lancerest.mv.chunker.localRefreshMaxBytes";
  static final long DEFAULT_MAX_BYTES = 64L << 20;
  /** Most time the chunker may take on the driver before the Spark path takes over. */
  static final String MAX_MILLIS_CONF = "spark.lancerest.mv.chunker.localRefreshMaxMillis";
  static final long DEFAULT_MAX_MILLIS = 2_000;

  /** Views whose chunker ran out of time on the driver: they expand on executors. */
  static final class SlowViews {
    private final Set<String> views = ConcurrentHashMap.newKeySet();
  }

  private LocalExpansion() {}

  /**
   * What the driver path did.
   *
   * @param output the expansion, or {@code null} when it declined (nothing kept)
   * @param why one line for the log: why it declined, or what it read
   */
  record Outcome(TaskOutput output, String why) {
    static Outcome declined(String why) {
      return new Outcome(null, why);
    }
  }

  /**
   * Why an expansion of {@code parents} parents would not run on the driver whatever the
   * definition, or {@code null} when it may.
   */
  static String declines(SparkSession spark, RefreshContext ctx, long parents) {
    long max = conf(spark, MAX_PARENTS_CONF, DEFAULT_MAX_PARENTS, false);
    if (max <= 0) {
      return MAX_PARENTS_CONF + " = " + max + " turns it off";
    }
    if (parents > max) {
      return parents + " parents to expand > " + MAX_PARENTS_CONF + " = " + max;
    }
    if (ctx.caches().get(SlowViews.class, SlowViews::new).views.contains(ctx.viewName())) {
      return "the chunker took longer than " + MAX_MILLIS_CONF + " on the driver before";
    }
    return null;
  }

  /**
   * Expands the parents {@code ids} of {@code fragments} on the driver, or declines.
   *
   * @param in the Spark path's input, {@code [__source_row_id, projected...]} of the
   *     fragment-scoped source read: its optimized plan is what the driver compiles
   * @param task the chunker the executors would run, without a broadcast parent set (the
   *     driver keeps only {@code ids} as it reads)
   */
  static Outcome tryExpand(RefreshContext ctx, org.lance.Dataset src, Dataset<Row> in,
      List<Integer> fragments, Roaring64NavigableMap ids, ChunkerTask task) {
    SparkSession spark = ctx.spark();
    String capped = declines(spark, ctx, ids.getLongCardinality());
    if (capped != null) {
      return Outcome.declined(capped);
    }
    long maxBytes = conf(spark, MAX_BYTES_CONF, DEFAULT_MAX_BYTES, true);
    long maxMillis = conf(spark, MAX_MILLIS_CONF, DEFAULT_MAX_MILLIS, false);
    long t0 = System.nanoTime();
    CompiledDefinition c;
    try {
      c = CompiledDefinition.of(in.queryExecution().optimizedPlan());
    } catch (RuntimeException e) {
      return Outcome.declined("planning the definition on the driver failed ("
          + DriverScan.firstLine(e) + ")");
    }
    if (c.why() != null) {
      return Outcome.declined(c.why());
    }
    long t1 = System.nanoTime();
    Parents parents = new Parents(ids, maxBytes);
    DriverScan.Stats read;
    try {
      read = DriverScan.scan(src, c, fragments, parents);
    } catch (Declined d) {
      return Outcome.declined(d.getMessage());
    } catch (MaterializedViewException e) {
      throw e;
    } catch (RuntimeException e) {
      // nothing was written: the Spark path reads the same fragments and reports what fails
      return Outcome.declined("reading the changed fragments on the driver failed ("
          + DriverScan.firstLine(e) + ")");
    }
    // The rows exactly as the Spark path's tasks get them (toJavaRDD deserializes the same way).
    ExpressionEncoder<Row> encoder = ExpressionEncoder.apply(in.schema());
    ExpressionEncoder.Deserializer<Row> toRow = encoder.resolveAndBind(
        encoder.resolveAndBind$default$1(), encoder.resolveAndBind$default$2())
        .createDeserializer();
    long t2 = System.nanoTime();
    // maxMillis is at most a day (conf): no overflow
    long deadline = t2 + maxMillis * 1_000_000;
    Iterator<Row> rows = parents.rows.stream().map(r -> (Row) toRow.apply(r)).iterator();
    ChunkerTask.Guard guard = () -> {
      ctx.checkCancelled();
      if (System.nanoTime() > deadline) {
        throw new OutOfTime();
      }
    };
    Iterator<TaskOutput> out;
    try {
      out = task.call(rows, guard);
    } catch (OutOfTime e) {
      ctx.caches().get(SlowViews.class, SlowViews::new).views.add(ctx.viewName());
      return Outcome.declined("the chunker took longer than " + MAX_MILLIS_CONF + " = "
          + maxMillis + " ms on the driver");
    } catch (MaterializedViewException e) {
      throw e; // the chunker's own errors under error_handling, a cancellation: as on executors
    } catch (Exception e) {
      throw new ChunkerRefreshException("Chunker refresh of view '" + ctx.viewName()
          + "' failed on the driver; the view is unchanged: " + e.getMessage(), e);
    }
    long t3 = System.nanoTime();
    return new Outcome(out.next(), String.format("%d rows read, %d parents (%d bytes) "
        + "expanded; plan %d ms, read %d ms, chunker and write %d ms", read.rowsRead(),
        parents.rows.size(), parents.bytes, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000,
        (t3 - t2) / 1_000_000));
  }

  /** Keeps the parents to expand, copied, up to the byte cap. */
  private static final class Parents implements DriverScan.RowHandler {
    private final Roaring64NavigableMap ids;
    private final long maxBytes;
    final List<UnsafeRow> rows = new ArrayList<>();
    long bytes;

    Parents(Roaring64NavigableMap ids, long maxBytes) {
      this.ids = ids;
      this.maxBytes = maxBytes;
    }

    @Override
    public void accept(UnsafeRow row) {
      if (!ids.contains(row.getLong(0))) {
        return;
      }
      UnsafeRow copy = row.copy();
      bytes += copy.getSizeInBytes();
      if (bytes > maxBytes) {
        throw new Declined("the parents to expand exceed " + MAX_BYTES_CONF + " = " + maxBytes
            + " bytes");
      }
      rows.add(copy);
    }
  }

  /** The driver's time for the chunker ran out. */
  private static final class OutOfTime extends RuntimeException {
    private static final long serialVersionUID = 1L;

    OutOfTime() {
      super(null, null, false, false);
    }
  }

  /** Longest {@link #MAX_MILLIS_CONF} accepted: a day, far beyond any sensible driver cap. */
  private static final long MAX_MILLIS_LIMIT = 86_400_000L;

  private static long conf(SparkSession spark, String key, long dflt, boolean bytes) {
    String v = spark.conf().get(key, null);
    if (v == null || v.isBlank()) {
      return dflt;
    }
    long n;
    try {
      n = bytes ? JavaUtils.byteStringAsBytes(v.trim()) : Long.parseLong(v.trim());
    } catch (RuntimeException e) {
      n = -1;
    }
    boolean millis = key.equals(MAX_MILLIS_CONF);
    if (n < 0 || (millis && n > MAX_MILLIS_LIMIT)) {
      String want = bytes ? "a size such as 67108864 or 64m"
          : millis ? "a whole number of milliseconds from 0 to " + MAX_MILLIS_LIMIT
          : "a whole number, 0 or more (0 turns the driver path off)";
      throw new io.lancerest.spark.mv.error.InvalidOptionException("Spark conf " + key + " = '" + v
          + "' is not valid: set " + want + ", or unset it for the default " + dflt);
    }
    return n;
  }
}
