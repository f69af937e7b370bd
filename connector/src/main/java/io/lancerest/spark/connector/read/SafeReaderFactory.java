package io.lancerest.spark.connector.read;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * lance-spark's readers, and for a {@link SafePartition} the batches they read rearranged into
 * the columns Spark asked for: {@code _rowaddr} dropped when it was only added, {@code _rowid}
 * computed from it.
 */
final class SafeReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final PartitionReaderFactory lance;
  private final String table;
  /** When the storage credentials the scan was planned with expire, or null. */
  private final Long credentialsExpireAt;

  SafeReaderFactory(PartitionReaderFactory lance, String table, Long credentialsExpireAt) {
    this.lance = lance;
    this.table = table;
    this.credentialsExpireAt = credentialsExpireAt;
  }

  private static InputPartition unwrap(InputPartition p) {
    return p instanceof SafePartition sp ? sp.lance() : p;
  }

  @Override
  public boolean supportColumnarReads(InputPartition p) {
    return lance.supportColumnarReads(unwrap(p));
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition p) {
    PartitionReader<ColumnarBatch> r = explained(() -> lance.createColumnarReader(unwrap(p)));
    return new Explained<>(p instanceof SafePartition sp ? new Rearranged(r, sp) : r, this);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition p) {
    if (p instanceof SafePartition sp) {
      // lance-spark reads every partition as columnar batches; rows, if Spark asks, from them
      return new Explained<>(new Rows(new Rearranged(
          explained(() -> lance.createColumnarReader(sp.lance())), sp)), this);
    }
    return new Explained<>(explained(() -> lance.createReader(p)), this);
  }

  private <T> T explained(java.util.function.Supplier<T> open) {
    try {
      return open.get();
    } catch (RuntimeException e) {
      throw expiredCredentials(e) ? explain(e) : e;
    }
  }

  /**
   * The object store refused expired credentials ({@link #expiredCredentials}): an error that
   * says so and names the table, which lance-core's own message does not.
   */
  RuntimeException explain(Exception e) {
    return ExpiredCredentials.explain("Reading table " + table, credentialsExpireAt, e);
  }

  static boolean expiredCredentials(Throwable e) {
    return ExpiredCredentials.in(e);
  }

  /** A reader whose errors are {@link #explain}ed. */
  private static final class Explained<T> implements PartitionReader<T> {
    private final PartitionReader<T> in;
    private final SafeReaderFactory f;

    Explained(PartitionReader<T> in, SafeReaderFactory f) {
      this.in = in;
      this.f = f;
    }

    @Override
    public boolean next() throws IOException {
      try {
        return in.next();
      } catch (IOException e) {
        if (expiredCredentials(e)) {
          throw f.explain(e);
        }
        throw e;
      } catch (RuntimeException e) {
        throw expiredCredentials(e) ? f.explain(e) : e;
      }
    }

    @Override
    public T get() {
      try {
        return in.get();
      } catch (RuntimeException e) {
        throw expiredCredentials(e) ? f.explain(e) : e;
      }
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  /** The batches of a {@link SafePartition} with Spark's columns. */
  private static final class Rearranged implements PartitionReader<ColumnarBatch> {
    private final PartitionReader<ColumnarBatch> in;
    private final int[] layout;
    private final int address;
    private final Map<Integer, String> meta;
    private final Map<Integer, RowIdSequence> sequences = new HashMap<>();

    Rearranged(PartitionReader<ColumnarBatch> in, SafePartition p) {
      this.in = in;
      this.layout = p.layout();
      this.address = p.address();
      this.meta = p.sequences();
    }

    @Override
    public boolean next() throws IOException {
      return in.next();
    }

    @Override
    public ColumnarBatch get() {
      ColumnarBatch b = in.get();
      ColumnVector[] out = new ColumnVector[layout.length];
      for (int i = 0; i < layout.length; i++) {
        out[i] = layout[i] >= 0 ? b.column(layout[i])
            : new RowIdColumn(b.column(address), this::sequence);
      }
      return new ColumnarBatch(out, b.numRows());
    }

    private RowIdSequence sequence(int fragment) {
      return sequences.computeIfAbsent(fragment, f -> {
        RowIdSequence s = RowIdSequence.parse(meta.get(f));
        if (s == null) {
          throw new IllegalStateException("No readable row-id sequence for fragment " + f
              + " (" + (meta.containsKey(f) ? "unreadable" : "not planned") + ")");
        }
        return s;
      });
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  /** Rows of a columnar reader, for Spark's row-based read path. */
  private static final class Rows implements PartitionReader<InternalRow> {
    private final PartitionReader<ColumnarBatch> batches;
    private java.util.Iterator<InternalRow> rows = java.util.Collections.emptyIterator();

    Rows(PartitionReader<ColumnarBatch> batches) {
      this.batches = batches;
    }

    @Override
    public boolean next() throws IOException {
      while (!rows.hasNext()) {
        if (!batches.next()) {
          return false;
        }
        rows = batches.get().rowIterator();
      }
      return true;
    }

    @Override
    public InternalRow get() {
      return rows.next();
    }

    @Override
    public void close() throws IOException {
      batches.close();
    }
  }
}
