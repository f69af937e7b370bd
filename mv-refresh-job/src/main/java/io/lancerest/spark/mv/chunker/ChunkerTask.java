package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.mv.ErrorHandling;
import io.lancerest.spark.mv.FunctionEnvelope;
import io.lancerest.spark.mv.InvalidOptionException;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.rowindex.SourceIdCollector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.lance.FragmentMetadata;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * The executor side of a chunker refresh: one Spark task takes its share of the parents (rows
 * {@code [__source_row_id, projected columns...]}), groups them into work items of {@code
 * source_task_size}, and writes each item's children through one streaming fragment writer.
 *
 * <p>Memory: parents of one work item are held (the batch form needs them; the row form needs
 * them to re-run after a failure), children are not. The chunker's iterator is drained into
 * Arrow batches of at most {@code min(max_rows_per_fragment, 4096)} rows (and about 16 MiB) that
 * lance-core pulls through the C stream interface and writes as they come, so a parent with any
 * fan-out runs in bounded memory.
 *
 * <p>Failures: a parent (or batch) that throws is handled by {@code error_handling}. Its partial
 * output is discarded: rows still in the current batch are dropped; if some were already handed
 * to the writer, the work item is written again from scratch (the abandoned data files are never
 * committed). Output that does not match the schema fails the task at once.
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
  private static final int QUEUE_ROWS = 256;

  private final String viewName;
  private final String viewUri;
  private final HashMap<String, String> storageOptions;
  private final byte[] envelope;
  private final String errorHandlingJson;
  private final String viewSchemaJson;
  private final String inputSchemaJson;
  private final int[] inputPositions;
  private final int[] inheritedPositions;
  private final int sourceTaskSize;
  private final int intraConcurrency;
  private final int maxRowsPerFragment;
  private final long arrowMemoryLimit;
  private final Broadcast<byte[]> expand;
  private final HashMap<Long, Integer> caps;

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
    try (Runner runner = new Runner(guard)) {
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

  /** One child row: its parent and the row the chunker emitted (outputs start at offset). */
  private record Child(long sid, Row row, int offset) {}

  /** Parents called together: one (row form, or an isolated batch parent) or a batch. */
  private record Unit(List<Row> parents, boolean batch) {
    long firstSid() {
      return parents.get(0).getLong(0);
    }

    String key() {
      return firstSid() + "/" + parents.size();
    }

    boolean contains(long sid) {
      for (Row p : parents) {
        if (p.getLong(0) == sid) {
          return true;
        }
      }
      return false;
    }
  }

  /** A buffered child, written to Arrow when its batch is flushed. */
  private record Pending(long sid, int childIndex, Row parent, Child child) {}

  /** The work item must be written again (output of a failed parent already went out). */
  private static final class RestartItem extends RuntimeException {
    RestartItem() {
      super("restart work item", null, false, false);
    }
  }

  /** What survives restarts of one work item. */
  private static final class ItemState {
    final Map<String, Integer> failures = new HashMap<>();
    final Set<String> split = new HashSet<>();
    final LinkedHashMap<Long, ChunkerRefreshResult.SkippedParent> skipped = new LinkedHashMap<>();
    /** The item's children outgrew the buffer: it is written as fragments of its own. */
    boolean ownFragments;

    void skip(long sid, int attempts, Throwable t) {
      skipped.putIfAbsent(sid, new ChunkerRefreshResult.SkippedParent(sid, attempts,
          t.getClass().getName(), String.valueOf(t.getMessage())));
    }
  }

  private static final Object END = new Object();

  private record Failed(Throwable error) {}

  /** Per-task resources: function instances (one per calling thread), allocator, thread pool. */
  private final class Runner implements AutoCloseable {
    /** The most child rows one batch buffered (lance-core's writer thread pulls the batches). */
    final AtomicLong maxBuffered = new AtomicLong();
    final FunctionEnvelope function = FunctionEnvelope.fromJson(envelope);
    final ErrorHandling errors = ErrorHandling.fromJson(errorHandlingJson);
    final Schema viewSchema = Schema.fromJSON(viewSchemaJson);
    final StructType inputSchema = (StructType) DataType.fromJson(inputSchemaJson);
    final StructType batchInputSchema;
    final ChunkerContext context;
    final List<Object> instances = Collections.synchronizedList(new ArrayList<>());
    final ThreadLocal<Object> instance = new ThreadLocal<>();
    final BufferAllocator allocator = new RootAllocator(arrowMemoryLimit);
    final ExecutorService pool;
    final List<ArrowSetters.Setter> setters = new ArrayList<>();
    final int outputs;
    final int batchRows = Math.max(1, Math.min(maxRowsPerFragment, MAX_BATCH_ROWS));
    final long itemBufferBytes = Math.min(ITEM_BUFFER_BYTES, arrowMemoryLimit / 4);
    final Guard guard;

    Runner(Guard guard) throws java.io.IOException {
      this.guard = guard;
      StructType b = new StructType().add(ChunkerLayout.SOURCE_ROW_ID,
          org.apache.spark.sql.types.DataTypes.LongType, false);
      for (var f : inputSchema.fields()) {
        b = b.add(f);
      }
      batchInputSchema = b;
      StructType output = org.apache.spark.sql.util.LanceArrowUtils.fromArrowSchema(
          function.outputSchema());
      context = new ChunkerContext(viewName, function.batch() ? b : inputSchema, output,
          function.options());
      for (Field f : viewSchema.getFields()) {
        setters.add(ArrowSetters.forField(f, f.getName()));
      }
      outputs = function.outputSchema().getFields().size();
      AtomicInteger n = new AtomicInteger();
      pool = intraConcurrency <= 1 ? null : Executors.newFixedThreadPool(intraConcurrency, r -> {
        Thread t = new Thread(r, "chunker-" + function.name() + "-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
    }

    Object instance() {
      Object o = instance.get();
      if (o == null) {
        o = ChunkerFunctions.instantiate(function.className(), function.batch(), viewName);
        if (o instanceof Chunker c) {
          c.open(context);
        } else {
          ((BatchChunker) o).open(context);
        }
        instances.add(o);
        instance.set(o);
      }
      return o;
    }

    Row inputRow(Row parent) {
      Object[] v = new Object[inputPositions.length];
      for (int i = 0; i < v.length; i++) {
        v[i] = parent.get(inputPositions[i]);
      }
      return new GenericRowWithSchema(v, inputSchema);
    }

    Iterator<Child> call(Unit u) {
      Object fn = instance();
      if (!u.batch()) {
        long sid = u.firstSid();
        Iterator<Row> out = ((Chunker) fn).chunk(inputRow(u.parents().get(0)));
        if (out == null) {
          return Collections.emptyIterator();
        }
        return map(out, r -> new Child(sid, r, 0));
      }
      List<Row> in = new ArrayList<>(u.parents().size());
      for (Row p : u.parents()) {
        Object[] v = new Object[inputPositions.length + 1];
        v[0] = p.getLong(0);
        for (int i = 0; i < inputPositions.length; i++) {
          v[i + 1] = p.get(inputPositions[i]);
        }
        in.add(new GenericRowWithSchema(v, batchInputSchema));
      }
      Iterator<Row> out = ((BatchChunker) fn).chunkBatch(in);
      if (out == null) {
        return Collections.emptyIterator();
      }
      return map(out, r -> {
        Object sid = r == null || r.length() == 0 ? null : r.get(0);
        if (!(sid instanceof Long id)) {
          throw new ChunkerOutputException(ChunkerLayout.SOURCE_ROW_ID, "Batch chunker '"
              + function.name() + "' returned a row whose field 0 is " + (sid == null ? "null"
              : "a " + sid.getClass().getName()) + "; it must be the parent's "
              + ChunkerLayout.SOURCE_ROW_ID + " (a Long)");
        }
        return new Child(id, r, 1);
      });
    }

    private Iterator<Child> map(Iterator<Row> rows, java.util.function.Function<Row, Child> f) {
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return rows.hasNext();
        }

        @Override
        public Child next() {
          return f.apply(rows.next());
        }
      };
    }

    List<Unit> units(List<Row> live, ItemState st) {
      List<Unit> out = new ArrayList<>();
      if (!function.batch()) {
        for (Row p : live) {
          out.add(new Unit(List.of(p), false));
        }
        return out;
      }
      int parts = Math.max(1, Math.min(intraConcurrency, live.size()));
      int per = (live.size() + parts - 1) / parts;
      for (int from = 0; from < live.size(); from += per) {
        Unit u = new Unit(live.subList(from, Math.min(live.size(), from + per)), true);
        if (st.split.contains(u.key())) {
          for (Row p : u.parents()) {
            out.add(new Unit(List.of(p), true));
          }
        } else {
          out.add(u);
        }
      }
      return out;
    }

    /**
     * Runs one work item. Its children are kept as encoded batches until the item is done (a
     * failed parent's output can then still be dropped), and handed to the task's writer; an
     * item whose children outgrow {@link #ITEM_BUFFER_BYTES} is written as fragments of its own,
     * streamed as the chunker emits them.
     */
    void runItem(List<Row> parents, TaskOutput out, TaskFragmentWriter writer) {
      // ascending parents write ascending source ids: the fragments can then be indexed
      parents.sort(java.util.Comparator.comparingLong(r -> r.getLong(0)));
      ItemState st = new ItemState();
      while (true) {
        List<Row> live = new ArrayList<>();
        for (Row p : parents) {
          if (!st.skipped.containsKey(p.getLong(0))) {
            live.add(p);
          }
        }
        if (live.isEmpty()) {
          out.skipped.addAll(st.skipped.values());
          return;
        }
        ItemStream s = new ItemStream(allocator, parents, units(live, st), st);
        if (!st.ownFragments) {
          ItemChildren b = buffer(s);
          if (b == null) {
            continue; // restart the work item
          }
          if (b.complete) {
            writer.add(b);
            finishItem(live, s, st, out);
            return;
          }
          // too large to hold: written on its own, starting with what was buffered
          st.ownFragments = true;
          if (!writeOwn(b, s, out)) {
            continue;
          }
          finishItem(live, s, st, out);
          return;
        }
        if (!writeOwn(null, s, out)) {
          continue;
        }
        finishItem(live, s, st, out);
        return;
      }
    }

    private void finishItem(List<Row> live, ItemStream s, ItemState st, TaskOutput out) {
      for (Row p : live) {
        long sid = p.getLong(0);
        if (!st.skipped.containsKey(sid)) {
          out.addParent(sid, s.counts.getOrDefault(sid, 0));
        }
      }
      out.skipped.addAll(st.skipped.values());
    }

    /**
     * The item's children as encoded batches, or {@code null} when the item must run again (a
     * failed parent's output was in an earlier batch); incomplete when they outgrew the buffer.
     */
    private ItemChildren buffer(ItemStream s) {
      ItemChildren b = new ItemChildren();
      try {
        while (s.loadNextBatch()) {
          b.add(s.getVectorSchemaRoot());
          if (b.bytes > itemBufferBytes) {
            return b; // the stream goes on, written on its own (writeOwn)
          }
        }
        b.complete = true;
        s.cancelPrefetch();
        s.close();
        return b;
      } catch (RestartItem e) {
        abandon(b, s);
        return null;
      } catch (RuntimeException | Error e) {
        abandon(b, s);
        throw e;
      } catch (java.io.IOException e) {
        abandon(b, s);
        throw new java.io.UncheckedIOException(e);
      }
    }

    private void abandon(ItemChildren b, ItemStream s) {
      b.close();
      s.cancelPrefetch();
      ItemChildren.closeQuietly(s);
    }

    /**
     * Writes the item's children, those {@code first} buffered then the rest of {@code s}, as
     * fragments of their own; {@code false} when the item must run again.
     */
    private boolean writeOwn(ItemChildren first, ItemStream s, TaskOutput out) {
      SourceIdCollector ids = new SourceIdCollector();
      ItemChildren.Stream collecting = new ItemChildren.Stream(allocator, first, s, ids);
      List<FragmentMetadata> written;
      try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
        try {
          Data.exportArrayStream(allocator, collecting, stream);
        } catch (RuntimeException e) {
          ItemChildren.closeQuietly(collecting); // not handed to lance-core: freed here
          throw e;
        }
        written = CredentialRefresh.fragments(storageOptions).datasetUri(viewUri)
            .allocator(allocator).data(stream).maxRowsPerFile(maxRowsPerFragment).execute();
      } catch (RuntimeException e) {
        Throwable f = s.failure;
        if (f instanceof RestartItem) {
          return false;
        }
        if (f instanceof RuntimeException re) {
          throw re;
        }
        if (f instanceof Error err) {
          throw err;
        }
        throw new ChunkerRefreshException("Writing children of view '" + viewName
            + "' failed: " + e.getMessage(), f == null ? e : f);
      } finally {
        s.cancelPrefetch();
        if (first != null) {
          first.close();
        }
      }
      List<FragmentMetadata> nonEmpty = TaskFragmentWriter.nonEmpty(written);
      out.addFragments(nonEmpty, ids.ranges(viewUri, storageOptions, allocator, nonEmpty,
          collecting.rows));
      return true;
    }

    @Override
    public void close() {
      if (pool != null) {
        pool.shutdownNow();
      }
      RuntimeException first = null;
      for (Object o : instances) {
        try {
          if (o instanceof Chunker c) {
            c.close();
          } else {
            ((BatchChunker) o).close();
          }
        } catch (RuntimeException e) {
          first = first == null ? e : first;
        }
      }
      allocator.close();
      if (first != null) {
        throw first;
      }
    }

    /** Children of one work item as a stream of Arrow batches, pulled by the fragment writer. */
    private final class ItemStream extends ArrowReader {
      final ArrayDeque<Unit> units;
      final ItemState st;
      final List<Row> itemParents;
      final Map<Long, Integer> counts = new HashMap<>();
      final Map<Long, Row> parentById = new HashMap<>();
      final Map<Unit, Pre> prefetched = new java.util.IdentityHashMap<>();
      final List<Future<?>> futures = new ArrayList<>();
      final List<Pending> pending = new ArrayList<>();
      long pendingBytes;
      Unit current;
      Iterator<Child> it;
      int unitStart;
      boolean unitFlushed;
      boolean firstAttempt;
      boolean exhausted;
      volatile Throwable failure;

      ItemStream(BufferAllocator a, List<Row> itemParents, List<Unit> units, ItemState st) {
        super(a);
        this.itemParents = itemParents;
        this.units = new ArrayDeque<>(units);
        this.st = st;
        for (Row p : itemParents) {
          parentById.put(p.getLong(0), p);
        }
      }

      @Override
      protected Schema readSchema() {
        return viewSchema;
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
        while (pending.size() < batchRows && pendingBytes < MAX_BATCH_BYTES) {
          if (current == null) {
            Unit u = units.poll();
            if (u == null) {
              exhausted = true;
              break;
            }
            start(u, true);
          }
          guard.check(); // outside the try: what it throws is not the chunker's failure
          Child c;
          try {
            if (it == null) {
              it = firstAttempt && pool != null ? prefetch(current) : call(current);
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
        maxBuffered.accumulateAndGet(pending.size(), Math::max);
        write(root);
        if (current != null && pending.size() > unitStart) {
          unitFlushed = true;
        }
        return true;
      }

      private void start(Unit u, boolean first) {
        current = u;
        unitStart = pending.size();
        unitFlushed = false;
        for (Row p : u.parents()) {
          counts.put(p.getLong(0), 0);
        }
        firstAttempt = first;
        it = null;
      }

      private void accept(Child c) {
        long sid = c.sid();
        if (current.batch() && !current.contains(sid)) {
          throw new ChunkerOutputException(ChunkerLayout.SOURCE_ROW_ID, "Batch chunker '"
              + function.name() + "' returned a row for " + ChunkerLayout.SOURCE_ROW_ID + " "
              + sid + ", which is not in the batch it was given");
        }
        int index = counts.merge(sid, 1, Integer::sum) - 1;
        if (caps != null) {
          Integer cap = caps.get(sid);
          if (cap != null && index >= cap) {
            counts.put(sid, cap);
            return;
          }
        }
        pending.add(new Pending(sid, index, parentById.get(sid), c));
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
        Unit u = current;
        int n = st.failures.merge(u.key(), 1, Integer::sum);
        ErrorHandling.Decision d = errors.decide(t, n);
        switch (d.action()) {
          case RETRY -> {
            sleep(d.delayMs());
            if (!rollback()) {
              throw new RestartItem();
            }
            start(u, false);
          }
          case SKIP -> {
            if (errors.faultIsolation() == ErrorHandling.FaultIsolation.FAIL_BATCH) {
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
                units.addFirst(new Unit(List.of(ps.get(i)), true));
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
          default -> throw new ChunkerRefreshException("Chunker '" + function.name() + "' ("
              + function.className() + ") failed on source row id" + (u.parents().size() > 1
              ? "s " + u.firstSid() + ".. (a batch of " + u.parents().size() + ")"
              : " " + u.firstSid()) + " after " + n + " attempt(s): " + t
              + ". The refresh committed nothing; fix the chunker or set error_handling to "
              + "retry or skip such failures", t);
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

      private void write(VectorSchemaRoot root) {
        root.allocateNew();
        BigIntVector sids = (BigIntVector) root.getVector(0);
        IntVector idx = (IntVector) root.getVector(1);
        List<FieldVector> vectors = root.getFieldVectors();
        int inherited = inheritedPositions.length;
        for (int i = 0; i < pending.size(); i++) {
          Pending p = pending.get(i);
          sids.setSafe(i, p.sid());
          idx.setSafe(i, p.childIndex());
          for (int j = 0; j < inherited; j++) {
            int col = 2 + j;
            try {
              setters.get(col).set(vectors.get(col), i, p.parent().get(inheritedPositions[j]));
            } catch (ArrowSetters.Mismatch m) {
              throw new ChunkerRefreshException("Cannot copy inherited column into view '"
                  + viewName + "': " + m.getMessage(), m);
            }
          }
          Row r = p.child().row();
          int offset = p.child().offset();
          int have = r == null ? 0 : r.length() - offset;
          if (have != outputs) {
            List<Field> out = function.outputSchema().getFields();
            String column = out.get(Math.min(Math.max(have, 0), outputs - 1)).getName();
            throw new ChunkerOutputException(column, "Chunker '" + function.name()
                + "' emitted a row with " + have + " output value(s) for source row id "
                + p.sid() + "; the output schema declares " + outputs + " ("
                + out.stream().map(Field::getName).toList() + "), first unmatched column '"
                + column + "'");
          }
          for (int j = 0; j < outputs; j++) {
            int col = 2 + inherited + j;
            try {
              setters.get(col).set(vectors.get(col), i, r.get(offset + j));
            } catch (ArrowSetters.Mismatch m) {
              throw new ChunkerOutputException(m.path, "Chunker '" + function.name()
                  + "' emitted " + m.getMessage() + " (source row id " + p.sid() + ", child "
                  + p.childIndex() + "). Fix the chunker or its declared output schema");
            }
          }
        }
        root.setRowCount(pending.size());
      }

      private Iterator<Child> prefetch(Unit u) {
        submit(u);
        int ahead = 0;
        for (Unit next : units) {
          if (ahead++ >= intraConcurrency - 1) {
            break;
          }
          submit(next);
        }
        return prefetched.remove(u).iterator();
      }

      private void submit(Unit u) {
        if (prefetched.containsKey(u)) {
          return;
        }
        Pre p = new Pre();
        prefetched.put(u, p);
        futures.add(pool.submit(() -> {
          try {
            Iterator<Child> out = call(u);
            while (out.hasNext()) {
              p.queue.put(out.next());
            }
            p.queue.put(END);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } catch (Throwable t) {
            try {
              p.queue.put(new Failed(t));
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        }));
      }

      void cancelPrefetch() {
        for (Future<?> f : futures) {
          f.cancel(true);
        }
        futures.clear();
        prefetched.clear();
      }
    }
  }

  /** Children computed ahead by a pool thread, handed over in order through a bounded queue. */
  private static final class Pre {
    final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(QUEUE_ROWS);

    Iterator<Child> iterator() {
      return new Iterator<>() {
        private Object next;

        @Override
        public boolean hasNext() {
          if (next == null) {
            try {
              next = queue.take();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new InterruptedRuntime();
            }
          }
          if (next instanceof Failed f) {
            next = null;
            Throwable t = f.error();
            if (t instanceof RuntimeException re) {
              throw re;
            }
            if (t instanceof Error err) {
              throw err;
            }
            throw new IllegalStateException(t);
          }
          return next != END;
        }

        @Override
        public Child next() {
          if (!hasNext()) {
            throw new java.util.NoSuchElementException();
          }
          Child c = (Child) next;
          next = null;
          return c;
        }
      };
    }
  }

  /** The task was interrupted (cancelled by Spark); never handled as a chunker failure. */
  private static final class InterruptedRuntime extends RuntimeException {
    InterruptedRuntime() {
      super("interrupted");
    }
  }
}
