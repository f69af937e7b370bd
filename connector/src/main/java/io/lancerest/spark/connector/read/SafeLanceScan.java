package io.lancerest.spark.connector.read;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * A lance-core scan (no Spark) that lance-core runs in linear time whatever the state of the
 * fragments ({@link FragmentHazard}): for the view engine's own reads on the driver.
 *
 * <p>The fragments that a compaction rewrote are scanned on their own, without the filter
 * (their batches say {@link Batch#filtered() filtered() == false}: the caller evaluates the
 * condition itself) and with {@code _rowaddr} instead of {@code _rowid}, which {@link
 * Batch#rowId} maps back; the other fragments are scanned with the filter, also reading {@code
 * _rowaddr} when the filter meets deletions. Rows come fragment group by group, not in one order
 * across groups.
 */
public final class SafeLanceScan {
  static final String ROW_ID = "_rowid";
  static final String ROW_ADDRESS = "_rowaddr";

  private SafeLanceScan() {}

  /**
   * What to scan.
   *
   * @param fragments the fragment ids, or {@code null} for every fragment
   * @param columns data and metadata columns; {@code _rowid} / {@code _rowaddr} may be among
   *     them or asked for with the flags
   * @param filter a Lance SQL filter, or {@code null}
   * @param rowIds whether {@link Batch#rowId} is used
   * @param rowAddresses whether {@link Batch#rowAddress} is used
   * @param batchSize rows per batch, or {@code null} for lance-core's default
   * @param useScalarIndex {@code false} to keep lance-core from answering the filter with an
   *     index
   */
  public record Request(List<Integer> fragments, List<String> columns, String filter,
      boolean rowIds, boolean rowAddresses, Long batchSize, boolean useScalarIndex) {
    public Request {
      fragments = fragments == null ? null : List.copyOf(fragments);
      columns = List.copyOf(columns);
    }

    /** Every column of {@code columns} of {@code fragments}, no filter. */
    public static Request of(List<Integer> fragments, List<String> columns) {
      return new Request(fragments, columns, null, false, false, null, true);
    }

    public Request withFilter(String f) {
      return new Request(fragments, columns, f, rowIds, rowAddresses, batchSize, useScalarIndex);
    }

    public Request withRowIds() {
      return new Request(fragments, columns, filter, true, rowAddresses, batchSize,
          useScalarIndex);
    }

    public Request withRowAddresses() {
      return new Request(fragments, columns, filter, rowIds, true, batchSize, useScalarIndex);
    }

    public Request withBatchSize(long rows) {
      return new Request(fragments, columns, filter, rowIds, rowAddresses, rows, useScalarIndex);
    }

    public Request withoutScalarIndex() {
      return new Request(fragments, columns, filter, rowIds, rowAddresses, batchSize, false);
    }
  }

  /** One batch lance-core read; valid only inside {@link Handler#accept}. */
  public static final class Batch {
    private final VectorSchemaRoot root;
    private final boolean filtered;
    private final FieldVector rowIds;
    private final FieldVector addresses;
    private final Map<Integer, RowIdSequence> sequences;

    private Batch(VectorSchemaRoot root, boolean filtered, Map<Integer, RowIdSequence> sequences) {
      this.root = root;
      this.filtered = filtered;
      this.sequences = sequences;
      this.rowIds = sequences == null ? root.getVector(ROW_ID) : null;
      this.addresses = root.getVector(ROW_ADDRESS);
    }

    /** The vectors lance-core read (possibly with {@code _rowaddr} added). */
    public VectorSchemaRoot root() {
      return root;
    }

    public int rowCount() {
      return root.getRowCount();
    }

    /** A data or metadata column asked for; {@code _rowid} only through {@link #rowId}. */
    public FieldVector column(String name) {
      return root.getVector(name);
    }

    /**
     * Whether lance-core applied the request's filter to these rows; {@code false} for
     * fragments a compaction rewrote, whose rows the caller must test itself.
     */
    public boolean filtered() {
      return filtered;
    }

    /** The stable row id of row {@code i}. */
    public long rowId(int i) {
      if (sequences == null) {
        return ((Number) rowIds.getObject(i)).longValue();
      }
      long a = rowAddress(i);
      RowIdSequence s = sequences.get((int) (a >>> 32));
      return s.rowIdAt(a & 0xffffffffL);
    }

    /**
     * The row ids as a Spark column: lance-core's {@code _rowid}, or the ids mapped from the row
     * addresses.
     */
    public org.apache.spark.sql.vectorized.ColumnVector rowIdColumn() {
      if (sequences == null) {
        return new org.lance.spark.vectorized.LanceArrowColumnVector(rowIds);
      }
      return new RowIdColumn(new org.lance.spark.vectorized.LanceArrowColumnVector(addresses),
          sequences::get);
    }

    /** The row address of row {@code i} (fragment id in the high 32 bits). */
    public long rowAddress(int i) {
      return ((Number) addresses.getObject(i)).longValue();
    }
  }

  /** Takes each batch. */
  @FunctionalInterface
  public interface Handler {
    void accept(Batch b) throws Exception;
  }

  /** Scans {@code ds} (at its version) as {@code r} asks, handing each batch to {@code h}. */
  public static void scan(Dataset ds, Request r, Handler h) throws Exception {
    List<Integer> plain = new ArrayList<>();
    List<Integer> rewritten = new ArrayList<>();
    Map<Integer, RowIdSequence> sequences = new HashMap<>();
    boolean deletions = false;
    List<FragmentMetadata> all = new ArrayList<>();
    for (Fragment f : ds.getFragments()) {
      all.add(f.metadata());
    }
    java.util.Set<Integer> wanted = r.fragments() == null ? null
        : new java.util.HashSet<>(r.fragments());
    for (FragmentMetadata f : all) {
      if (wanted != null && !wanted.contains(f.getId())) {
        continue;
      }
      FragmentHazard hz = FragmentHazard.of(f);
      RowIdSequence seq = hz == FragmentHazard.REWRITTEN_ROW_IDS && f.getRowIdMeta() != null
          ? RowIdSequence.parse(f.getRowIdMeta().getMetadata()) : null;
      if (seq != null) {
        rewritten.add(f.getId());
        sequences.put(f.getId(), seq);
      } else {
        // an unreadable sequence: lance-core's own (slow) route is all there is
        plain.add(f.getId());
        deletions |= hz != FragmentHazard.NONE;
      }
    }
    boolean wantsRowIds = r.rowIds() || r.columns().contains(ROW_ID);
    if (!plain.isEmpty()) {
      List<String> cols = new ArrayList<>(r.columns());
      cols.remove(ROW_ID);
      cols.remove(ROW_ADDRESS);
      if (r.rowAddresses() || r.columns().contains(ROW_ADDRESS)
          || (deletions && r.filter() != null)) {
        cols.add(ROW_ADDRESS);
      }
      if (wantsRowIds) {
        cols.add(ROW_ID);
      }
      run(ds, r, plain, wanted == null && rewritten.isEmpty(), cols, r.filter(), null, h);
    }
    if (!rewritten.isEmpty()) {
      List<String> cols = new ArrayList<>(r.columns());
      cols.remove(ROW_ID);
      cols.remove(ROW_ADDRESS);
      cols.add(ROW_ADDRESS);
      run(ds, r, rewritten, false, cols, null, sequences, h);
    }
  }

  private static void run(Dataset ds, Request r, List<Integer> fragments, boolean allFragments,
      List<String> columns, String filter, Map<Integer, RowIdSequence> sequences, Handler h)
      throws Exception {
    ScanOptions.Builder b = new ScanOptions.Builder().columns(columns)
        .useScalarIndex(r.useScalarIndex());
    if (!allFragments) {
      b.fragmentIds(fragments);
    }
    if (filter != null) {
      b.filter(filter);
    }
    if (r.batchSize() != null) {
      b.batchSize(r.batchSize());
    }
    boolean filtered = r.filter() == null || filter != null;
    try (LanceScanner s = ds.newScan(b.build()); ArrowReader reader = s.scanBatches()) {
      while (reader.loadNextBatch()) {
        h.accept(new Batch(reader.getVectorSchemaRoot(), filtered, sequences));
      }
    }
  }
}
