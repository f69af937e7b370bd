package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.RefreshOptions;
import org.apache.spark.sql.SparkSession;

/**
 * Runs one chunker refresh in its own JVM, for tests that kill it or constrain its heap.
 * Arguments: chunker class, source uri, view uri, source_task_size, max_rows_per_fragment, and
 * optionally the task Arrow memory cap in bytes.
 */
public final class ChildRefreshMain {
  private ChildRefreshMain() {}

  public static void main(String[] args) throws Exception {
    SparkSession spark = SparkSession.builder().master("local[1]").appName("chunker-child")
        .config("spark.ui.enabled", "false")
        // Spark refuses to start below ~450 MiB of heap; the test heap is smaller on purpose.
        .config("spark.testing.memory", String.valueOf(1L << 30))
        .getOrCreate();
    if (args.length > 5) {
      spark.conf().set(ChunkerTask.TASK_ARROW_MEMORY_CONF, args[5]);
    }
    var def = ChunkerFixture.definition(Class.forName(args[0]), null, null);
    io.lancerest.spark.mv.Probes probes = new io.lancerest.spark.mv.Probes();
    ChunkerRefreshResult r = ChunkerFixture.refresh(spark, args[1], args[2], def,
        RefreshOptions.builder().sourceTaskSize(Integer.parseInt(args[3]))
            .maxRowsPerFragment(Integer.parseInt(args[4])).build(), probes);
    Long buffered = probes.get(io.lancerest.spark.mv.RefreshListener.Probe.CHILD_ROWS_BUFFERED);
    System.out.println("RESULT " + r.rowsInserted() + " " + buffered
        + " " + Runtime.getRuntime().maxMemory());
    spark.stop();
  }
}
