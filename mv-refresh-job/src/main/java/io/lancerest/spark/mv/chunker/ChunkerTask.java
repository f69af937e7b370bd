package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The executor side of a chunker refresh: one Spark task takes its share of the parents (rows
 * {@code [__source_row_id, projected columns...]}), groups them into work items of {@code
 * source_task_size}, and writes each item's children through one streaming fragment writer
 * ({@link TaskRunner} runs the items, {@link ItemStream} calls the chunker and handles its
 * failures).
 */
final class ChunkerTask implements FlatMapFunction<Iterator<Row>, TaskOutput> {
  private static final long serialVersionUID = 1L;
  static final int MAX_BATCH_ROWS = 4096;
  /**
   * Most bytes of encoded children a work item keeps before they go to the task's writer; an
   * item with more is written as fragments of its own (at most a quarter of a task's Arrow
   * memory cap, when one is set).
   */
  static final long ITEM_BUFFER_BYTES = 64L << 20;
  static final long MAX_BATCH_BYTES = 16L << 20;

  // Shipped to the executors as they are: strings, arrays and hash maps only; the objects made
  // from them (function, schemas, allocator) are made there, by TaskRunner.
  final String viewName;
  final String viewUri;
  final HashMap<String, String> storageOptions;
  final byte[] envelope;
  final String errorHandlingJson;
  final String viewSchemaJson;
  final String inputSchemaJson;
  final int[] inputPositions;
  final int[] inheritedPositions;
  private final int sourceTaskSize;
  final int intraConcurrency;
  final int maxRowsPerFragment;
  final long arrowMemoryLimit;
  private final Broadcast<byte[]> expand;
  /** Per parent, the most children kept ({@code output_limit}'s cut), or {@code null}. */
  final HashMap<Long, Integer> caps;

  /** Spark conf: a cap, in bytes, on the Arrow memory of one task's buffers (default: none). */
  static final String TASK_ARROW_MEMORY_CONF = "spark.lancerest.mv.chunker.taskArrowMemory";
  static final int DEFAULT_SOURCE_TASK_SIZE = 1024;
  static final int DEFAULT_MAX_ROWS_PER_FRAGMENT = 1 << 20;

  /**
   * The refresh options a task uses, defaults applied.
   *
   * @param sourceTaskSize parents per work item
   * @param intraApplierConcurrency threads calling the chunker inside one task; the children
   *     keep the parents' order
   * @param maxRowsPerFragment rows per new view fragment
   * @param taskArrowMemoryBytes hard cap on the Arrow memory of one task's buffers, a guard for
   *     small executors
   */
  record Settings(int sourceTaskSize, int intraApplierConcurrency, int maxRowsPerFragment,
      long taskArrowMemoryBytes) {
    static Settings of(RefreshOptions o, SparkSession spark) {
      long bytes = Long.MAX_VALUE;
      scala.Option<String> cap = spark.conf().getOption(TASK_ARROW_MEMORY_CONF);
      if (cap.isDefined()) {
        try {
          bytes = JavaUtils.byteStringAsBytes(cap.get().trim());
        } catch (RuntimeException e) {
          bytes = -1;
        }
        if (bytes <= 0) {
          throw new InvalidOptionException(TASK_ARROW_MEMORY_CONF + " must be a positive size "
              + "in bytes (e.g. 268435456 or 256m), got '" + cap.get() + "'");
        }
      }
      return new Settings(RefreshOptions.orDefault(o.sourceTaskSize(), DEFAULT_SOURCE_TASK_SIZE),
          RefreshOptions.orDefault(o.intraApplierConcurrency(), 1),
          RefreshOptions.orDefault(o.maxRowsPerFragment(), DEFAULT_MAX_ROWS_PER_FRAGMENT), bytes);
    }
  }

  ChunkerTask(String viewName, String viewUri, Map<String, String> storageOptions,
      FunctionEnvelope function, ErrorHandling errorHandling, Schema viewSchema,
      StructType inputSchema, int[] inputPositions, int[] inheritedPositions,
      Settings settings, Broadcast<byte[]> expand, Map<Long, Integer> caps) {
    this.viewName = viewName;
    this.viewUri = viewUri;
    this.storageOptions = new HashMap<>(storageOptions);
    this.envelope = function.toJsonBytes();
    this.errorHandlingJson = errorHandling.toJson();
    this.viewSchemaJson = viewSchema.toJson();
    this.inputSchemaJson = inputSchema.json();
    this.inputPositions = inputPositions;
    this.inheritedPositions = inheritedPositions;
    this.sourceTaskSize = settings.sourceTaskSize();
    this.intraConcurrency = settings.intraApplierConcurrency();
    this.maxRowsPerFragment = settings.maxRowsPerFragment();
    this.arrowMemoryLimit = settings.taskArrowMemoryBytes();
    this.expand = expand;
    this.caps = caps == null ? null : new HashMap<>(caps);
  }

  /**
   * Checked before every call of the chunker and every row it emits; it stops the work by
   * throwing. Executors need none (Spark interrupts and kills their tasks); the driver, which has
   * no task to kill, passes its deadline and cancellation this way.
   */
  @FunctionalInterface
  interface Guard {
    Guard NONE = () -> {};

    void check();
  }

  @Override
  public Iterator<TaskOutput> call(Iterator<Row> rows) throws Exception {
    return call(rows, Guard.NONE);
  }

  /**
   * {@link #call(Iterator)}, stopped by whatever {@code guard} throws: that exception leaves
   * as it is, never handled by {@code error_handling}, and nothing the task wrote is reported.
   */
  Iterator<TaskOutput> call(Iterator<Row> rows, Guard guard) throws Exception {
    TaskOutput out = new TaskOutput();
    Roaring64NavigableMap wanted = expand == null ? null : ParentIds.fromBytes(expand.value());
    try (TaskRunner runner = new TaskRunner(this, guard)) {
      try (TaskFragmentWriter writer = new TaskFragmentWriter(viewUri, storageOptions,
          runner.allocator, runner.viewSchema, maxRowsPerFragment, arrowMemoryLimit)) {
        List<Row> item = new ArrayList<>();
        while (rows.hasNext()) {
          Row r = rows.next();
          if (wanted != null && !wanted.contains(r.getLong(0))) {
            continue;
          }
          item.add(r);
          if (item.size() == sourceTaskSize) {
            runner.runItem(item, out, writer);
            item = new ArrayList<>();
          }
        }
        if (!item.isEmpty()) {
          runner.runItem(item, out, writer);
        }
        writer.finish(out);
      }
      out.maxBufferedRows = runner.maxBuffered.get();
    }
    return List.of(out).iterator();
  }
}
