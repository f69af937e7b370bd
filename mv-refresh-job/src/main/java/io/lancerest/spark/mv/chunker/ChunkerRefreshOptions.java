package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.mv.InvalidOptionException;
import io.lancerest.spark.mv.RefreshListener;
/**
 * Refresh options of a chunker view (the fields of RefreshMaterializedViewRequest that apply).
 *
 * @param srcVersion source version to refresh to; {@code null} = latest
 * @param sourceTaskSize parents per work item (default 1024)
 * @param concurrency maximum parallel Spark tasks; {@code null} = one task per source fragment
 *     (at least Spark's default parallelism when the source has fewer fragments)
 * @param intraApplierConcurrency threads calling the chunker inside one task (default 1); the
 *     children keep the parents' order
 * @param maxRowsPerFragment maximum rows per new view fragment (default 1,048,576)
 * @param outputLimit cap on the total number of view rows, or {@code null}
 * @param taskArrowMemoryBytes hard cap on the Arrow memory of one task's buffers (default: no
 *     cap); a guard for small executors
 * @param jobId identifies the refresh in Spark job descriptions and the errors table
 * @param listener observes the refresh ({@link RefreshListener#NONE} when not given)
 * @param force rebuild: every filtered source row is expanded again and every existing view row
 *     replaced, even when the source did not change (e.g. after the chunker's code changed
 *     behind the same class name)
 */
public record ChunkerRefreshOptions(Long srcVersion, int sourceTaskSize, Integer concurrency,
    int intraApplierConcurrency, int maxRowsPerFragment, Long outputLimit,
    long taskArrowMemoryBytes, String jobId, boolean force, RefreshListener listener) {
  public static final int DEFAULT_SOURCE_TASK_SIZE = 1024;
  public static final int DEFAULT_MAX_ROWS_PER_FRAGMENT = 1 << 20;

  public ChunkerRefreshOptions {
    listener = listener == null ? RefreshListener.NONE : listener;
    positive("source_task_size", sourceTaskSize);
    positive("intra_applier_concurrency", intraApplierConcurrency);
    positive("max_rows_per_fragment", maxRowsPerFragment);
    if (concurrency != null) {
      positive("concurrency", concurrency);
    }
    if (outputLimit != null && outputLimit < 0) {
      throw new InvalidOptionException("output_limit must be >= 0, got " + outputLimit);
    }
    // src_version is checked against the source by the refresh driver, as for every kind
    if (taskArrowMemoryBytes <= 0) {
      throw new IllegalArgumentException("task Arrow memory must be > 0");
    }
  }

  private static void positive(String name, long v) {
    if (v < 1) {
      throw new InvalidOptionException(name + " must be >= 1, got " + v);
    }
  }

  public static ChunkerRefreshOptions defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Builds options; unset fields take the defaults above. */
  public static final class Builder {
    private Long srcVersion;
    private int sourceTaskSize = DEFAULT_SOURCE_TASK_SIZE;
    private Integer concurrency;
    private int intraApplierConcurrency = 1;
    private int maxRowsPerFragment = DEFAULT_MAX_ROWS_PER_FRAGMENT;
    private Long outputLimit;
    private long taskArrowMemoryBytes = Long.MAX_VALUE;
    private String jobId;
    private boolean force;
    private RefreshListener listener;

    public Builder srcVersion(Long v) {
      this.srcVersion = v;
      return this;
    }

    public Builder sourceTaskSize(int v) {
      this.sourceTaskSize = v;
      return this;
    }

    public Builder concurrency(Integer v) {
      this.concurrency = v;
      return this;
    }

    public Builder intraApplierConcurrency(int v) {
      this.intraApplierConcurrency = v;
      return this;
    }

    public Builder maxRowsPerFragment(int v) {
      this.maxRowsPerFragment = v;
      return this;
    }

    public Builder outputLimit(Long v) {
      this.outputLimit = v;
      return this;
    }

    public Builder taskArrowMemoryBytes(long v) {
      this.taskArrowMemoryBytes = v;
      return this;
    }

    public Builder jobId(String v) {
      this.jobId = v;
      return this;
    }

    public Builder force(boolean v) {
      this.force = v;
      return this;
    }

    /** Reports the refresh to {@code l} ({@link RefreshListener}). */
    public Builder listener(RefreshListener l) {
      this.listener = l;
      return this;
    }

    public ChunkerRefreshOptions build() {
      return new ChunkerRefreshOptions(srcVersion, sourceTaskSize, concurrency,
          intraApplierConcurrency, maxRowsPerFragment, outputLimit, taskArrowMemoryBytes, jobId,
          force, listener);
    }
  }
}
