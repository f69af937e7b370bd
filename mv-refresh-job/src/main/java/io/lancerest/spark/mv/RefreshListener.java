package io.lancerest.spark.mv;

import java.io.Serializable;

/**
 * Observes one refresh: what it read and wrote, and the moment before it commits. Passed with
 * the refresh ({@link MaterializedViews#refresh(java.util.List, RefreshOptions,
 * RefreshListener)}); nothing is registered globally, so two refreshes in one JVM never see
 * each other's listener.
 *
 * <p>A listener that overrides {@link #afterTaskBatch} travels to executors with the write
 * tasks, hence {@link Serializable}: on a cluster each task calls its own copy. Every method has a no-op
 * default; an exception thrown by {@link #beforeCommit} or {@link #afterTaskBatch} fails the
 * refresh with nothing committed, as any failure at that point would.
 */
public interface RefreshListener extends Serializable {
  /** Listens to nothing. */
  RefreshListener NONE = new RefreshListener() {
    private static final long serialVersionUID = 1L;

    private Object readResolve() {
      return NONE;
    }
  };

  /** What a refresh reports as it goes; the value's type is given per probe. */
  enum Probe {
    /** Source fragment ids an incremental refresh read ({@code List<Integer>}). */
    SOURCE_FRAGMENTS_READ,
    /**
     * View fragment ids looked at to find the view rows of changed source rows: those whose
     * source row id range holds one of them ({@code List<Integer>}).
     */
    VIEW_FRAGMENTS_READ,
    /**
     * Of those, the fragments whose {@code __source_row_id} column was read, because they have
     * no source id index ({@code List<Integer>}).
     */
    VIEW_FRAGMENTS_SCANNED,
    /** Spark tasks of the refresh's write job ({@code Integer}). */
    WRITE_TASKS,
    /** The fragment diff an incremental refresh planned from ({@code fragments.FragmentDiff}). */
    FRAGMENT_DIFF,
    /**
     * Where a query view's incremental rows were written ({@code String}): {@code "driver"},
     * or {@code "spark"} with the reason the driver declined.
     */
    WRITE_PATH,
    /** Whether the driver write compiled the definition anew ({@code Boolean}; false: reused). */
    PLAN_COMPILED,
    /** Live row-id sets of source fragments served from the session's cache ({@code Long}). */
    ROW_ID_SETS_CACHED,
    /** The most child rows one chunker task buffered before writing them ({@code Long}). */
    CHILD_ROWS_BUFFERED
  }

  /** A probe's value, once per refresh attempt that measured it. */
  default void observe(Probe probe, Object value) {}

  /**
   * Whether an incremental refresh may read only the source fragments that changed since the
   * watermark. {@code false} makes it read every source row, as when that cannot be told:
   * the results must be the same, which is what tests of the two paths compare.
   */
  default boolean readChangedFragmentsOnly() {
    return true;
  }

  /** On the driver, after the change is computed and staged, just before the view commit. */
  default void beforeCommit() {}

  /**
   * In a query view's write task (on an executor), after each batch of rows it handed to
   * lance-core; the listener is then serialized with the task, so a listener that overrides
   * this must be serializable. Chunker and UDTF tasks do not call it.
   */
  default void afterTaskBatch(int partition) {}
}
