package io.lancerest.spark.connector.search.scan;

import io.lancerest.spark.connector.read.ExpiredCredentials;
import io.lancerest.spark.connector.search.SearchResults;
import io.lancerest.spark.connector.search.Searches;
import java.io.IOException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.spark.vectorized.LanceArrowColumnVector;

/**
 * Runs a search in its task and hands lance-core's batches to Spark as columnar batches (a
 * fixed-size vector column reads as {@code array<float>}, as in the table's scans).
 */
final class SearchReaderFactory implements PartitionReaderFactory {
  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("a search is read in columnar batches");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    SearchScan.Partition p = (SearchScan.Partition) partition;
    SearchResults results;
    try {
      results = Searches.open(p.source().dataset(), p.plan(), p.columns());
    } catch (RuntimeException e) {
      throw explained(p, e);
    }
    return new PartitionReader<>() {
      @Override
      public boolean next() throws IOException {
        try {
          return results.next();
        } catch (IOException | RuntimeException e) {
          if (ExpiredCredentials.in(e)) {
            throw ExpiredCredentials.explain("Searching table " + p.plan().table(),
                p.source().credentialsExpireAt(), e);
          }
          throw e;
        }
      }

      @Override
      public ColumnarBatch get() {
        try {
          VectorSchemaRoot root = results.batch();
          StructField[] fields = p.read().fields();
          ColumnVector[] columns = new ColumnVector[fields.length];
          for (int i = 0; i < fields.length; i++) {
            columns[i] = new LanceArrowColumnVector(root.getVector(fields[i].name()));
          }
          return new ColumnarBatch(columns, root.getRowCount());
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }

      @Override
      public void close() throws IOException {
        try {
          results.close();
        } catch (IOException | RuntimeException e) {
          throw e;
        } catch (Exception e) {
          throw new IOException(e);
        }
      }
    };
  }

  /** {@code e}, or the error that explains expired storage credentials. */
  private static RuntimeException explained(SearchScan.Partition p, RuntimeException e) {
    return ExpiredCredentials.in(e) ? ExpiredCredentials.explain("Searching table "
        + p.plan().table(), p.source().credentialsExpireAt(), e) : e;
  }
}
