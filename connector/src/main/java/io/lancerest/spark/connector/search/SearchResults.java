package io.lancerest.spark.connector.search;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.ipc.LanceScanner;

/** The batches of one running search, best first; closing it ends the lance-core scan. */
public final class SearchResults implements AutoCloseable {
  private final LanceScanner scanner;
  private final ArrowReader reader;

  SearchResults(LanceScanner scanner, ArrowReader reader) {
    this.scanner = scanner;
    this.reader = reader;
  }

  /** Loads the next batch into {@link #batch()}; {@code false} when there is none. */
  public boolean next() throws java.io.IOException {
    return reader.loadNextBatch();
  }

  /** The batch {@link #next()} loaded; its vectors are reused by the next call. */
  public VectorSchemaRoot batch() throws java.io.IOException {
    return reader.getVectorSchemaRoot();
  }

  @Override
  public void close() throws Exception {
    try {
      reader.close();
    } finally {
      scanner.close();
    }
  }
}
