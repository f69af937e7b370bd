package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.error.FunctionFailedException;
import io.lancerest.spark.mv.refresh.TaskFailures;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.Row;

/**
 * The children of one work item as a stream of Arrow batches, pulled by the fragment writer,
 * with the chunker's failures handled by {@code error_handling} as they come.
 *
 * <p>A parent (or batch) that throws is retried, skipped or fails the refresh. Its partial
 * output is discarded: rows still in the current batch are dropped; if some were already handed
 * to the writer, the stream throws {@link RestartItem} and the work item is written again from
 * scratch (the abandoned data files are never committed). Output that does not match the schema
 * fails the task at once.
 */
final class ItemStream extends ArrowReader {
  /** The work item must be written again (output of a failed parent already went out). */
  static final class RestartItem extends RuntimeException {
    RestartItem() {
      super("restart work item", null, false, false);
    }
  }

  /** The task was interrupted (cancelled by Spark); never handled as a chunker failure. */
  static final class InterruptedRuntime extends RuntimeException {
    InterruptedRuntime() {
      super("interrupted");
    }
  }

  private final TaskRunner task;
  private final ArrayDeque<WorkUnit> units;
  private final ItemState st;
  private final List<Row> itemParents;
  /** Children emitted so far, by parent (those past a cap included). */
  final Map<Long, Integer> counts = new HashMap<>();
  private final Map<Long, Row> parentById = new HashMap<>();
  private final Prefetch prefetch;
  private final List<ChildEncoder.Pending> pending = new ArrayList<>();
  private long pendingBytes;
  private WorkUnit current;
  private Iterator<ChildRow> it;
  private int unitStart;
  private boolean unitFlushed;
  private boolean firstAttempt;
  private boolean exhausted;
  /** What stopped the stream, for the writer's caller (lance-core wraps it). */
  volatile Throwable failure;

  ItemStream(TaskRunner task, BufferAllocator a, List<Row> itemParents, List<WorkUnit> units,
      ItemState st) {
    super(a);
    this.task = task;
    this.itemParents = itemParents;
    this.units = new ArrayDeque<>(units);
    this.st = st;
    this.prefetch = new Prefetch(task.pool, task.intraConcurrency, task.calls);
    for (Row p : itemParents) {
      parentById.put(p.getLong(0), p);
    }
  }

  @Override
  protected Schema readSchema() {
    return task.viewSchema;
  }

  @Override
  public long bytesRead() {
    return 0;
  }

  @Override
  protected void closeReadSource() {}

  @Override
  public boolean loadNextBatch() {
    try {
      return fill();
    } catch (RuntimeException | Error e) {
      if (failure == null) {
        failure = e;
      }
      throw e;
    }
  }

  private boolean fill() {
    if (exhausted) {
      return false;
    }
    VectorSchemaRoot root;
    try {
      root = getVectorSchemaRoot();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    pending.clear();
    pendingBytes = 0;
    unitStart = 0;
    while (pending.size() < task.batchRows && pendingBytes < ChunkerTask.MAX_BATCH_BYTES) {
      if (current == null) {
        WorkUnit u = units.poll();
        if (u == null) {
          exhausted = true;
          break;
        }
        start(u, true);
      }
      task.guard.check(); // outside the try: what it throws is not the chunker's failure
      ChildRow c;
      try {
        if (it == null) {
          it = firstAttempt && prefetch.enabled() ? prefetch.children(current, units)
              : task.calls.call(current);
        }
        if (!it.hasNext()) {
          current = null;
          it = null;
          continue;
        }
        c = it.next();
      } catch (ChunkerOutputException | RestartItem | InterruptedRuntime e) {
        throw e;
      } catch (RuntimeException | LinkageError | AssertionError
          | StackOverflowError e) {
        onFailure(e);
        continue;
      }
      accept(c);
    }
    if (pending.isEmpty() && exhausted) {
      return false;
    }
    task.maxBuffered.accumulateAndGet(pending.size(), Math::max);
    task.encoder.write(root, pending);
    if (current != null && pending.size() > unitStart) {
      unitFlushed = true;
    }
    return true;
  }

  private void start(WorkUnit u, boolean first) {
    current = u;
    unitStart = pending.size();
    unitFlushed = false;
    for (Row p : u.parents()) {
      counts.put(p.getLong(0), 0);
    }
    firstAttempt = first;
    it = null;
  }

  private void accept(ChildRow c) {
    long sid = c.sid();
    if (current.batch() && !current.contains(sid)) {
      throw new ChunkerOutputException(ChunkerLayout.SOURCE_ROW_ID, "Batch chunker '"
          + task.calls.function.name() + "' returned a row for " + ChunkerLayout.SOURCE_ROW_ID
          + " " + sid + ", which is not in the batch it was given");
    }
    int index = counts.merge(sid, 1, Integer::sum) - 1;
    if (task.caps != null) {
      Integer cap = task.caps.get(sid);
      if (cap != null && index >= cap) {
        counts.put(sid, cap);
        return;
      }
    }
    pending.add(new ChildEncoder.Pending(sid, index, parentById.get(sid), c));
    pendingBytes += ArrowSetters.estimateBytes(c.row());
  }

  /** Drops the current unit's buffered rows; false if some already went to the writer. */
  private boolean rollback() {
    if (unitFlushed) {
      return false;
    }
    pending.subList(unitStart, pending.size()).clear();
    for (Row p : current.parents()) {
      counts.put(p.getLong(0), 0);
    }
    return true;
  }

  private void onFailure(Throwable t) {
    WorkUnit u = current;
    int n = st.failures.merge(u.key(), 1, Integer::sum);
    ErrorHandling.Decision d = task.errors.decide(t, n);
    switch (d.action()) {
      case RETRY -> {
        sleep(d.delayMs());
        if (!rollback()) {
          throw new RestartItem();
        }
        start(u, false);
      }
      case SKIP -> {
        if (task.errors.faultIsolation() == ErrorHandling.FaultIsolation.FAIL_BATCH) {
          for (Row p : itemParents) {
            st.skip(p.getLong(0), n, t);
          }
          throw new RestartItem();
        }
        if (u.parents().size() > 1) {
          st.split.add(u.key());
          if (!rollback()) {
            throw new RestartItem();
          }
          List<Row> ps = u.parents();
          for (int i = ps.size() - 1; i >= 0; i--) {
            units.addFirst(new WorkUnit(List.of(ps.get(i)), true));
          }
        } else {
          st.skip(u.firstSid(), n, t);
          if (!rollback()) {
            throw new RestartItem();
          }
        }
        current = null;
        it = null;
      }
      // The view and job are named by the refresh's driver (TaskFailures).
      default -> throw new FunctionFailedException("chunker '" + task.calls.function.name()
          + "' (" + task.calls.function.className() + ")", "on source row id"
          + (u.parents().size() > 1
          ? "s " + u.firstSid() + ".. (a batch of " + u.parents().size() + ")"
          : " " + u.firstSid()) + " after " + n + " attempt(s)", TaskFailures.firstCause(t), t);
    }
  }

  private void sleep(long ms) {
    if (ms <= 0) {
      return;
    }
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedRuntime();
    }
  }

  /** Stops the chunker calls running ahead of the stream. */
  void cancelPrefetch() {
    prefetch.cancel();
  }
}
