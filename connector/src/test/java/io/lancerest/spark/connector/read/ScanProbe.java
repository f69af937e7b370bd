package io.lancerest.spark.connector.read;

import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * One lance-core scan of a dataset, in a JVM of its own (it may never end). Arguments: dataset
 * URI, Lance filter ({@code -} for none), columns (comma-separated, {@code _rowid} / {@code
 * _rowaddr} allowed). Prints {@code ROWS <n> MS <ms>}.
 */
public final class ScanProbe {
  private ScanProbe() {}

  public static void main(String[] args) throws Exception {
    List<String> columns = Arrays.asList(args[2].split(","));
    ScanOptions.Builder b = new ScanOptions.Builder().columns(columns);
    if (!args[1].equals("-")) {
      b.filter(args[1]);
    }
    long t0 = System.nanoTime();
    long rows = 0;
    try (BufferAllocator a = new RootAllocator(); Dataset ds = Dataset.open(args[0], a);
        LanceScanner s = ds.newScan(b.build()); ArrowReader r = s.scanBatches()) {
      while (r.loadNextBatch()) {
        rows += r.getVectorSchemaRoot().getRowCount();
      }
    }
    System.out.println("ROWS " + rows + " MS " + (System.nanoTime() - t0) / 1_000_000);
    System.out.flush();
    // lance-core's runtime threads are not daemons
    Runtime.getRuntime().halt(0);
  }
}
