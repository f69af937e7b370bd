package io.lancerest.spark.mv.refresh;

import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.lance.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source and view datasets of one refresh attempt, shared by every step that reads them on
 * the driver: the driver's rules, the kind's plan, its driver-side reads, the view commit and
 * the maintenance after it. Each table is opened once, on first use; another version of it is
 * checked out of that open dataset (a manifest read in the same session, not a new open). A
 * refresh that opened the tables again at every step opened the source up to six times and the
 * view up to four. Spark's tasks open what they read themselves.
 *
 * <p>The datasets are lent, never handed over: a step must not close one. The driver closes
 * them all when the attempt ends.
 */
public final class AttemptDatasets implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AttemptDatasets.class);
  private final String viewName;
  private final ViewTables tables;
  private final BufferAllocator sourceMemory = new RootAllocator();
  /** Apart from the source's: a failed view commit may leave memory here (see close). */
  private final BufferAllocator viewMemory = new RootAllocator();
  private final Map<Long, Dataset> source = new HashMap<>();
  /** Why a source version could not be opened, kept so that it is tried once. */
  private final Map<Long, RuntimeException> unopenable = new HashMap<>();
  private Dataset view;
  /** The view at the version this attempt committed, for the maintenance after it. */
  private Dataset committed;
  private boolean commitFailed;
  private boolean closed;

  AttemptDatasets(String viewName, ViewTables tables) {
    this.viewName = viewName;
    this.tables = tables;
  }

  /** The view table at its latest version when the attempt first asked for it. */
  synchronized Dataset view() {
    requireOpen();
    if (view == null) {
      try {
        view = tables.view().open(viewMemory, null);
      } catch (RuntimeException e) {
        throw new MaterializedViewException("Cannot open the table of view " + viewName
            + " at '" + tables.viewUri() + "': " + e.getMessage(), e);
      }
    }
    return view;
  }

  /**
   * The view table at {@code version}, which must be the version this attempt read ({@link
   * RefreshTarget#view()}): an attempt reads and commits on one version of the view.
   */
  public Dataset view(long version) {
    Dataset v = view();
    if (v.version() != version) {
      throw new IllegalStateException("View " + viewName + ": this attempt read version "
          + v.version() + " of the view table, not " + version);
    }
    return v;
  }

  /** The view table at {@code version}, the version this attempt committed, checked out. */
  synchronized Dataset committedView(long version) {
    if (committed == null) {
      committed = view().checkoutVersion(version);
    }
    return committed;
  }

  /**
   * Marks the view commit of this attempt as failed: lance-core 4.0.0 keeps a few hundred bytes
   * of Arrow C-schema memory of an Overwrite that conflicts or is rolled back, which {@link
   * #close} then expects.
   */
  synchronized void commitFailed() {
    commitFailed = true;
  }

  /** The source table at its latest version (kept as that version for the attempt). */
  synchronized Dataset sourceLatest() {
    requireOpen();
    if (!source.isEmpty()) {
      return source(source.values().iterator().next().latestVersion());
    }
    Dataset ds;
    try {
      ds = tables.source().open(sourceMemory, null);
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open the source table of view " + viewName
          + " at '" + tables.sourceUri() + "': " + e.getMessage(), e);
    }
    source.put(ds.version(), ds);
    return ds;
  }

  /** The source table at {@code version}; fails naming the view, the table and the version. */
  public Dataset source(long version) {
    try {
      return sourceAt(version);
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot open version " + version + " of the source "
          + "table of view " + viewName + " at '" + tables.sourceUri() + "': " + e.getMessage(),
          e);
    }
  }

  /**
   * The source table at {@code version}, or {@code null} when that version cannot be opened
   * (never written, or removed by a cleanup): the caller tells which ({@link #whyUnopenable}).
   */
  synchronized Dataset sourceIfOpenable(long version) {
    if (unopenable.containsKey(version)) {
      return null;
    }
    try {
      return sourceAt(version);
    } catch (RuntimeException e) {
      LOG.debug("View {}: version {} of the source table cannot be opened: {}", viewName,
          version, e.getMessage());
      unopenable.put(version, e);
      return null;
    }
  }

  /** Why {@link #sourceIfOpenable} found {@code version} unopenable; {@code null} if it did not. */
  synchronized RuntimeException whyUnopenable(long version) {
    return unopenable.get(version);
  }

  private synchronized Dataset sourceAt(long version) {
    requireOpen();
    Dataset ds = source.get(version);
    if (ds == null) {
      RuntimeException known = unopenable.get(version);
      if (known != null) {
        throw known;
      }
      // the first version opens the table; any other is checked out of it
      ds = source.isEmpty() ? tables.source().open(sourceMemory, version)
          : source.values().iterator().next().checkoutVersion(version);
      source.put(version, ds);
    }
    return ds;
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("View " + viewName + ": the refresh attempt's datasets "
          + "were closed when it ended");
    }
  }

  /**
   * Closes every dataset of the attempt. A failure to close, or memory still accounted, is
   * logged, never thrown: the refresh has ended, and may have committed.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    source.values().forEach(this::closeQuietly);
    if (committed != null) {
      closeQuietly(committed);
    }
    if (view != null) {
      closeQuietly(view);
    }
    release(sourceMemory, "source", false);
    release(viewMemory, "view", commitFailed);
  }

  private void release(BufferAllocator memory, String table, boolean expected) {
    long left = memory.getAllocatedMemory();
    try {
      memory.close();
    } catch (IllegalStateException leaked) {
      if (expected) {
        // lance-core's own, after a failed commit (commitFailed): bounded, not ours to free
        LOG.debug("View {}: {} bytes of the {} table's memory still accounted after a failed "
            + "commit", viewName, left, table);
      } else {
        LOG.warn("View {}: {} bytes of the {} table's memory were not released by the refresh "
            + "attempt: {}", viewName, left, table, leaked.getMessage());
      }
    }
  }

  private void closeQuietly(Dataset ds) {
    try {
      ds.close();
    } catch (RuntimeException e) {
      LOG.warn("View {}: closing a dataset of the refresh failed: {}", viewName, e.toString());
    }
  }
}
