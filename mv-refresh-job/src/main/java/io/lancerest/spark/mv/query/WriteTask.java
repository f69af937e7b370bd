package io.lancerest.spark.mv.query;

import static io.lancerest.spark.mv.query.QueryRefresh.LOG;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.FragmentShipping;
import io.lancerest.spark.mv.refresh.ViewTables;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Executor side: streams a partition's projected rows into new view fragments. Rows are
 * {@code [__source_row_id, __is_set, projection...]}, plus {@code
 * _row_last_updated_at_version} after them when unchanged view rows are to be kept.
 */
final class WriteTask implements FlatMapFunction<Iterator<InternalRow>, WriteTask.Output> {
  private static final long serialVersionUID = 1L;
  private final String viewUri;
  private final HashMap<String, String> storage;
  private final String schemaJson;
  /** Driver side only: the view table's schema, as {@link #schemaJson} ships it. */
  private final transient Schema plain;
  private final int maxRowsPerFile;
  /** Driver side only: the ids to write, or {@code null} for every row. */
  final transient Roaring64NavigableMap onlyIds;
  private final transient Roaring64NavigableMap inViewIds;
  private final long watermark;
  private final int updatedAtColumn;
  private Broadcast<byte[]> only;
  private Broadcast<byte[]> inView;
  private RefreshListener listener = RefreshListener.NONE;
  private VectorRows vectors;

  /**
   * What one write task wrote: serialised fragment metadata, row count, the source row ids it
   * found already in the view and unchanged (serialised set; {@code null} when not asked), and
   * each fragment's source row id range ({@link FragmentShipping.Written#ranges}).
   */
  record Output(byte[] fragments, long rows, byte[] kept,
      List<FragmentSourceRanges.Range> ranges)
      implements Serializable {}

  private WriteTask(ViewTables t, Schema plain, RefreshOptions o, Roaring64NavigableMap onlyIds,
      Roaring64NavigableMap inViewIds, long watermark, int updatedAtColumn) {
    this.viewUri = t.viewUri();
    this.storage = new HashMap<>(t.viewStorageOptions());
    this.schemaJson = plain.toJson();
    this.plain = plain;
    this.maxRowsPerFile = o.maxRowsPerFragment() == null ? 0 : o.maxRowsPerFragment();
    this.onlyIds = onlyIds;
    this.inViewIds = inViewIds;
    this.watermark = watermark;
    this.updatedAtColumn = updatedAtColumn;
  }

  /** Writes every row. */
  static WriteTask every(ViewTables t, Schema plain, RefreshOptions o) {
    return new WriteTask(t, plain, o, null, null, 0, -1);
  }

  /** Writes the rows whose source row id is in {@code ids}. */
  static WriteTask only(ViewTables t, Schema plain, RefreshOptions o, Roaring64NavigableMap ids) {
    return new WriteTask(t, plain, o, ids, null, 0, -1);
  }

  /**
   * Writes every row except those already in the view ({@code inView}) and not updated after
   * {@code watermark} (column {@code updatedAtColumn}); reports those as kept.
   */
  static WriteTask keeping(ViewTables t, Schema plain, RefreshOptions o,
      Roaring64NavigableMap inView, long watermark, int updatedAtColumn) {
    return new WriteTask(t, plain, o, null, inView, watermark, updatedAtColumn);
  }

  /**
   * The keeping rule of {@link #keeping}: {@code r} ({@code __source_row_id} first, the update
   * version in column {@code col}) is in the view and known not to have changed since the
   * watermark. NULL (version unknown) counts as changed and is re-projected: that only costs
   * rows of changed fragments, and is the same choice as the full scan's {@link
   * RowIdScans#source}.
   */
  static boolean unchangedInView(Roaring64NavigableMap view, long watermark, InternalRow r,
      int col) {
    return view.contains(r.getLong(0)) && !r.isNullAt(col) && r.getLong(col) <= watermark;
  }

  /**
   * The listener the tasks call after each batch, shipped with the task only when it listens
   * to batches: one that only observes on the driver need not be serializable.
   */
  void reportingTo(RefreshListener l) {
    this.listener = listensToBatches(l) ? l : RefreshListener.NONE;
  }

  private static boolean listensToBatches(RefreshListener l) {
    try {
      return l.getClass().getMethod("afterTaskBatch", int.class).getDeclaringClass()
          != RefreshListener.class;
    } catch (NoSuchMethodException e) {
      return true;
    }
  }

  /**
   * Checks the computed vectors of rows of {@code projected} as they are written (decided here,
   * on the driver, once: see {@link VectorRows}).
   */
  void checkingVectors(StructType projected, String viewName) {
    this.vectors = VectorRows.plan(projected, plain, viewName);
  }

  /** Ships the id sets to the executors; the caller destroys the broadcasts. */
  List<Broadcast<byte[]>> broadcast(JavaSparkContext jsc) {
    List<Broadcast<byte[]>> out = new ArrayList<>();
    if (onlyIds != null) {
      only = jsc.broadcast(RowIdSet.serialize(onlyIds));
      out.add(only);
    }
    if (inViewIds != null) {
      inView = jsc.broadcast(RowIdSet.serialize(inViewIds));
      out.add(inView);
    }
    return out;
  }

  @Override
  public Iterator<Output> call(Iterator<InternalRow> rows) throws Exception {
    Schema schema = Schema.fromJSON(schemaJson);
    TaskContext tc = TaskContext.get();
    Iterator<InternalRow> in = rows;
    if (only != null) {
      in = new FilteringIterator(rows, RowIdSet.deserialize(only.value()));
    }
    Roaring64NavigableMap kept = null;
    if (inView != null) {
      Roaring64NavigableMap view = RowIdSet.deserialize(inView.value());
      Roaring64NavigableMap k = Roaring64NavigableMap.bitmapOf();
      kept = k;
      int col = updatedAtColumn;
      long mark = watermark;
      in = new FilteringIterator(rows, r -> {
        if (unchangedInView(view, mark, r, col)) {
          k.addLong(r.getLong(0));
          return false;
        }
        return true;
      });
    }
    in = VectorRows.checked(vectors, in);
    int partition = tc == null ? -1 : tc.partitionId();
    RefreshListener hook = listener;
    long started = System.nanoTime();
    try (BufferAllocator a = new RootAllocator()) {
      boolean any = in.hasNext();
      long firstRow = System.nanoTime();
      // column 0 is __source_row_id: its range per fragment lets later refreshes skip it
      FragmentShipping.Written w = FragmentShipping.writeRows(LanceLocation.of(viewUri, storage), a, schema, in,
          maxRowsPerFile, () -> hook.afterTaskBatch(partition), 0);
      LOG.debug("Write task {}: first row after {} ms ({}), {} rows written in {} ms", partition,
          (firstRow - started) / 1_000_000, any, w.rows(),
          (System.nanoTime() - firstRow) / 1_000_000);
      // kept was filled by the filter as writeRows pulled the rows, on this thread.
      return List.of(new Output(FragmentShipping.toBytes(w.fragments()), w.rows(),
          kept == null ? null : RowIdSet.serialize(kept), new ArrayList<>(w.ranges())))
          .iterator();
    }
  }

  /** Rows whose {@code __source_row_id} (column 0) is in the set. */
  private static final class FilteringIterator implements Iterator<InternalRow> {
    private final Iterator<InternalRow> rows;
    private final java.util.function.Predicate<InternalRow> keep;
    private InternalRow next;

    FilteringIterator(Iterator<InternalRow> rows, Roaring64NavigableMap ids) {
      this(rows, r -> ids.contains(r.getLong(0)));
    }

    FilteringIterator(Iterator<InternalRow> rows, java.util.function.Predicate<InternalRow> keep) {
      this.rows = rows;
      this.keep = keep;
    }

    @Override
    public boolean hasNext() {
      while (next == null && rows.hasNext()) {
        InternalRow r = rows.next();
        if (keep.test(r)) {
          next = r;
        }
      }
      return next != null;
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      InternalRow r = next;
      next = null;
      return r;
    }
  }
}
