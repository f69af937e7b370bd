package io.lancerest.spark.mv.udtf;

import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.UdtfContext;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Spark task of a UDTF refresh: it receives its share of the input sorted by partition key,
 * cuts it into runs of equal keys (NULL being a key like any other) and handles each run as one
 * partition: reuse a checkpoint, or call the UDTF with retries, write the output as uncommitted
 * fragments and checkpoint them. It reports one {@link PartitionOutcome} per partition.
 *
 * <p>Rows stream from Spark's sorted shuffle output through the UDTF into lance-core's fragment
 * writer; nothing here holds a whole partition.
 */
final class PartitionTask implements FlatMapFunction<Iterator<Row>, PartitionOutcome> {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionTask.class);

  /** Everything a task needs, in serializable form. */
  record Spec(String udtfName, String className, String outputSchemaJson,
      Map<String, String> options, String errorHandlingJson, String keyColumn,
      int keyIndex, boolean stripKey, StructType inputSchema, long sourceVersion,
      String viewLocation, Map<String, String> storageOptions, int maxRowsPerFile,
      Set<String> finishedKeyIds, PartitionCheckpoints checkpoints)
      implements java.io.Serializable {
    /** Storage options hold object-store credentials: only their names are printed. */
    @Override
    public String toString() {
      return "PartitionTask.Spec[" + udtfName + " of view " + viewLocation + ", storage options "
          + storageOptions.keySet() + "]";
    }
  }

  private final Spec spec;

  PartitionTask(Spec spec) {
    this.spec = spec;
  }

  @Override
  public Iterator<PartitionOutcome> call(Iterator<Row> input) throws Exception {
    BatchUdtf udtf = UdtfRefresh.instantiate(spec.className(), spec.udtfName());
    Schema arrow = Schema.fromJSON(spec.outputSchemaJson());
    OutputFragments writer = new OutputFragments(spec.viewLocation(), spec.storageOptions(),
        arrow, spec.maxRowsPerFile());
    List<PartitionOutcome> outcomes = new ArrayList<>();
    boolean partitioned = spec.keyColumn() != null;
    try (BufferAllocator allocator = new RootAllocator();
        PartitionCheckpoints.Writer checkpoints = spec.checkpoints().writer()) {
      if (!partitioned) {
        outcomes.add(partition(udtf, writer, checkpoints, allocator, null, strip(input)));
        return outcomes.iterator();
      }
      Runs runs = new Runs(input, spec.keyIndex());
      while (runs.nextRun()) {
        PartitionOutcome o = partition(udtf, writer, checkpoints, allocator, runs.key(),
            strip(runs));
        outcomes.add(o);
        if (o.status() == PartitionOutcome.Status.FAILED) {
          // The refresh is failing; partitions finished so far in other tasks are checkpointed
          // and reused by the next run, so stop spending time on this one.
          break;
        }
      }
    }
    return outcomes.iterator();
  }

  private Iterator<Row> strip(Iterator<Row> rows) {
    if (!spec.stripKey()) {
      return rows;
    }
    StructType schema = spec.inputSchema();
    int n = schema.size();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public Row next() {
        Row r = rows.next();
        Object[] values = new Object[n];
        for (int i = 0; i < n; i++) {
          values[i] = r.get(i);
        }
        return new GenericRowWithSchema(values, schema);
      }
    };
  }

  private PartitionOutcome partition(BatchUdtf udtf, OutputFragments writer,
      PartitionCheckpoints.Writer checkpoints, BufferAllocator allocator, Object key,
      Iterator<Row> rows) throws InterruptedException {
    boolean partitioned = spec.keyColumn() != null;
    String keyId = PartitionKeys.id(partitioned, key);
    String display = PartitionKeys.display(partitioned, key);
    if (spec.finishedKeyIds().contains(keyId)) {
      LOG.info("UDTF '{}': partition {} reused from an earlier run's checkpoint",
          spec.udtfName(), display);
      return PartitionOutcome.reused(keyId, display);
    }
    String where = "UDTF '" + spec.udtfName() + "' (" + spec.className() + ") for partition "
        + (partitioned ? spec.keyColumn() + "=" + display : display);
    ErrorHandling policy = ErrorHandling.fromJson(spec.errorHandlingJson());
    ReplayableRows replay = mayRetry(policy) ? new ReplayableRows(rows, spec.inputSchema()) : null;
    try {
      for (int attempt = 1; ; attempt++) {
        Iterator<Row> in = replay == null ? rows
            : attempt == 1 ? replay.first() : replay.replay();
        UdtfContext ctx = new UdtfContext(spec.keyColumn(), key, spec.sourceVersion(),
            spec.options(), spec.inputSchema(), writer.sparkSchema(), attempt);
        try {
          Iterator<Row> out = udtf.process(ctx, in);
          FragmentShipping.Written w = writer.write(allocator,
              out == null ? java.util.Collections.emptyIterator() : out, where);
          byte[] bytes = FragmentShipping.toBytes(w.fragments());
          checkpoints.add(new PartitionCheckpoints.Checkpoint(keyId, display, w.rows(), bytes));
          return PartitionOutcome.done(keyId, display, bytes, w.rows(), attempt);
        } catch (UdtfOutputMismatchException e) {
          return PartitionOutcome.failed(PartitionOutcome.Status.FAILED, keyId, display,
              attempt, e);
        } catch (Exception | LinkageError | AssertionError | StackOverflowError e) {
          ErrorHandling.Decision d = policy.decide(e, attempt);
          if (d.action() == ErrorHandling.Action.RETRY && replay != null) {
            LOG.warn("{} failed (attempt {}), retrying in {} ms: {}", where, attempt,
                d.delayMs(), e.toString());
            Thread.sleep(d.delayMs());
            continue;
          }
          PartitionOutcome.Status s = d.action() == ErrorHandling.Action.SKIP
              ? PartitionOutcome.Status.SKIPPED : PartitionOutcome.Status.FAILED;
          LOG.warn("{} failed after {} attempt(s); partition {}: {}", where, attempt,
              s == PartitionOutcome.Status.SKIPPED ? "skipped" : "fails the refresh",
              e.toString());
          return PartitionOutcome.failed(s, keyId, display, attempt, e);
        }
      }
    } finally {
      if (replay != null) {
        replay.close();
      }
    }
  }

  /** Whether any rule can retry, in which case rows are spilled for replay. */
  private static boolean mayRetry(ErrorHandling policy) {
    return policy.rules().stream().anyMatch(r -> r.action() == ErrorHandling.Action.RETRY
        && r.maxAttempts() > 1);
  }

  /**
   * Cuts a key-sorted row stream into runs of equal keys. The current run is itself the
   * iterator of its rows; {@link #nextRun()} skips whatever the consumer left unread.
   */
  static final class Runs implements Iterator<Row> {
    private final Iterator<Row> rows;
    private final int keyIndex;
    private Row pending;
    private Object key;
    private boolean inRun;

    Runs(Iterator<Row> rows, int keyIndex) {
      this.rows = rows;
      this.keyIndex = keyIndex;
    }

    /** Moves to the next run; false at the end of the stream. */
    boolean nextRun() {
      while (inRun && hasNext()) {
        next();
      }
      if (pending == null) {
        if (!rows.hasNext()) {
          return false;
        }
        pending = rows.next();
      }
      key = pending.get(keyIndex);
      inRun = true;
      return true;
    }

    Object key() {
      return key;
    }

    @Override
    public boolean hasNext() {
      if (!inRun) {
        return false;
      }
      if (pending == null) {
        if (!rows.hasNext()) {
          inRun = false;
          return false;
        }
        pending = rows.next();
      }
      if (!PartitionKeys.same(pending.get(keyIndex), key)) {
        inRun = false;
        return false;
      }
      return true;
    }

    @Override
    public Row next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      Row r = pending;
      pending = null;
      return r;
    }
  }
}
