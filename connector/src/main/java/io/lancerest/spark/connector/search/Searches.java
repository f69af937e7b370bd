package io.lancerest.spark.connector.search;

import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;

/** Runs a {@link SearchPlan} with lance-core: one search over the whole table, top k overall. */
public final class Searches {
  private Searches() {}

  /** Takes each batch of results; the root is valid only during the call. */
  @FunctionalInterface
  public interface Handler {
    void accept(VectorSchemaRoot batch) throws Exception;
  }

  /**
   * Runs {@code plan} on {@code ds}, which must be at the plan's version, reading {@code columns}
   * plus the plan's score column, in lance-core's order (best first).
   */
  public static void run(Dataset ds, SearchPlan plan, List<String> columns, Handler h)
      throws Exception {
    try (SearchResults results = open(ds, plan, columns)) {
      while (results.next()) {
        h.accept(results.batch());
      }
    }
  }

  /** The results of {@code plan} on {@code ds}, batch by batch; the caller closes them. */
  public static SearchResults open(Dataset ds, SearchPlan plan, List<String> columns) {
    if (ds.version() != plan.version()) {
      throw new IllegalStateException("Search on " + plan.table() + " was planned for version "
          + plan.version() + " but the dataset opened is at version " + ds.version());
    }
    LanceScanner scanner = ds.newScan(plan.scanOptions(columns));
    ArrowReader reader;
    try {
      reader = scanner.scanBatches();
    } catch (RuntimeException e) {
      closeQuietly(scanner, e);
      throw e;
    }
    return new SearchResults(scanner, reader);
  }

  private static void closeQuietly(AutoCloseable c, Exception cause) {
    try {
      c.close();
    } catch (Exception suppressed) {
      cause.addSuppressed(suppressed);
    }
  }
}
